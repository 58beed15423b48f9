// Benchmark (not a test; vitest only collects *.test.ts): the multi-pass reference contentHash vs the
// single-pass src/core/content-hash.ts on ~1M-character tool outputs. Run it with
//   npx jiti test/core-content-hash.bench.ts
// It prints ms per million characters (tinybench mean, and median over samples) per input shape.
import { Bench } from "tinybench";
import { contentHash } from "../src/core/content-hash.js";
import { referenceContentHash } from "./core-content-hash-reference.js";

/** Deterministic PRNG (mulberry32), so every run hashes the same text. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = ["src", "test", "error", "warning:", "const", "return", "function", "=>", "{", "}", "ok", "node_modules", "0x1f", "42", "import", "from", "déjà", "読み込み", "✓", "😀"];

/** A realistic tool output: build-log/ls/grep/code lines, indentation, some trailing blanks, blank lines. */
function toolOutput(targetChars: number, seed: number, eol: "\n" | "\r\n" | "mixed"): string {
  const rand = prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T;
  const lines: string[] = [];
  let size = 0;
  while (size < targetChars) {
    const kind = rand();
    let line: string;
    if (kind < 0.08) line = "";
    else if (kind < 0.3) line = `-rw-r--r--  1 user staff ${Math.floor(rand() * 99999)} Jan ${1 + Math.floor(rand() * 28)} 12:${10 + Math.floor(rand() * 49)} ${pick(WORDS)}.ts`;
    else if (kind < 0.5) line = `src/${pick(WORDS)}/${pick(WORDS)}.ts:${Math.floor(rand() * 900)}:${Math.floor(rand() * 80)}: ${pick(WORDS)} ${pick(WORDS)} ${pick(WORDS)}`;
    else {
      const indent = " ".repeat(2 * Math.floor(rand() * 5));
      const words = Array.from({ length: 2 + Math.floor(rand() * 12) }, () => pick(WORDS));
      line = indent + words.join(" ");
    }
    if (rand() < 0.15) line += pick([" ", "  ", "\t", " \t "]); // trailing blanks to strip
    const lineEnd = eol === "mixed" ? (rand() < 0.5 ? "\n" : "\r\n") : eol;
    lines.push(line + lineEnd);
    size += line.length + lineEnd.length;
  }
  return `  ${lines.join("")}\n\n`;
}

const SHAPES: Array<[string, string]> = [
  ["LF lines", toolOutput(1_000_000, 1, "\n")],
  ["CRLF lines", toolOutput(1_000_000, 2, "\r\n")],
  ["mixed LF/CRLF lines", toolOutput(1_000_000, 3, "mixed")],
];

for (const [, text] of SHAPES) {
  if (contentHash("bash", text) !== referenceContentHash("bash", text)) throw new Error("hash mismatch: the bench would compare different work");
}

const bench = new Bench({ time: 1500, warmup: true, warmupTime: 300 });
for (const [shape, text] of SHAPES) {
  bench.add(`before (multi-pass) | ${shape}`, () => void referenceContentHash("bash", text));
  bench.add(`after (single-pass) | ${shape}`, () => void contentHash("bash", text));
}
await bench.run();

const rows = bench.tasks.map((task) => {
  const shape = task.name.split(" | ")[1] ?? "";
  const chars = SHAPES.find(([name]) => name === shape)?.[1].length ?? 1;
  const latency = task.result.state === "completed" ? task.result.latency : undefined;
  const perM = (ms: number | undefined) => (ms === undefined ? "n/a" : ((ms * 1e6) / chars).toFixed(2));
  return { task: task.name, chars, "mean ms/M chars": perM(latency?.mean), "median ms/M chars": perM(latency?.p50), samples: latency?.samplesCount ?? 0 };
});
console.log(`node ${process.version}`);
console.table(rows);
