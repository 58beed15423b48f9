/**
 * Worker-count independence, idempotence and bounded in-flight work of compressEligible,
 * with the real piscina pool.
 */

import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createChainRunner, type ChainRunner } from "../src/main/chain-runner.js";
import { COMMIT_GROUP_SIZE } from "../src/main/compress-eligible.js";
import { compressFile } from "./helpers/compress-harness.js";
import { maskedLine } from "./helpers/masked-lines.js";
import { calls, SessionBuilder } from "./helpers/session-builder.js";

/** Eight chains with mixed sizes, reused ids, one oversized output each few chains. */
function mixedSession(): SessionBuilder {
  const s = new SessionBuilder();
  for (let c = 0; c < 8; c++) {
    const spec = calls(`c${c}`, 3 + (c % 4), 200 + c * 50, c % 2 ? "read" : "bash");
    if (c % 3 === 0) spec.push({ id: "reused", name: "bash", args: { command: "cat huge" }, output: `huge ${c} `.repeat(10000) });
    // An own `__proto__` key (JSON.parse makes one) must be archived as it is: msgpackr renames it.
    if (c === 5) spec.push({ id: "odd-keys", name: "bash", args: JSON.parse('{"__proto__":{"polluted":true},"constructor":"x","command":"odd"}'), output: "odd keys" });
    // A first call whose args hold a `usage` object, which lightening replaces whole: the body
    // quotes the first call's args and must quote the real ones.
    if (c === 2) spec[0]!.args = { command: "cat notes", usage: { input: 123456, output: 654321, note: "an argument named usage" } };
    // A big output whose result names another tool than its call: the record's contentHash must
    // use the call's.
    if (c === 6) spec.push({ id: "renamed", name: "bash", args: { command: "cat big" }, output: `renamed ${c}\r\n  `.repeat(9000) });
    s.chain(`task ${c} ünïcode ✓`, spec);
  }
  for (const line of s.lines as Array<{ message?: { role?: string; toolCallId?: string; toolName?: string } }>) {
    if (line.message?.role === "toolResult" && line.message.toolCallId === "renamed") line.message.toolName = "read";
  }
  return s;
}

/** The runner, counting how each chain task carried its span. */
function countingRunner(runner: ChainRunner, kinds: string[]): ChainRunner {
  return { ...runner, run: (task, onStart) => (kinds.push(task.input.kind === "file-slice" ? "lines" : "messages"), runner.run(task, onStart)) };
}

/** Appended lines with the fields that legitimately vary masked out. */
function appendedMasked(file: string, headerLines: number): string[] {
  return fs.readFileSync(file, "utf8").trim().split("\n").slice(headerLines).map(maskedLine);
}

function spillFiles(file: string): Record<string, string> {
  const dir = path.join(path.dirname(file), `${new SessionBuilder().sessionId}-blobs`);
  if (!fs.existsSync(dir)) return {};
  return Object.fromEntries(fs.readdirSync(dir).sort().map((name) => [name, fs.readFileSync(path.join(dir, name), "utf8")]));
}

const runners: ChainRunner[] = [];
afterAll(async () => {
  await Promise.all(runners.map((r) => r.close()));
});

describe("determinism", () => {
  it("0, 1, 2 and 4 workers, on the file path, the live (in-memory) path and pi's compact path (in memory, lines from the file), append byte-identical lines and write identical spill files", async () => {
    const builder = mixedSession();
    const results = [];
    for (const path of ["file", "memory", "lines"] as const) {
      for (const workers of [0, 1, 2, 4]) {
        const runner = createChainRunner(workers);
        runners.push(runner);
        const file = builder.writeTemp();
        const kinds: string[] = [];
        const { result } = await compressFile(file, { runner: countingRunner(runner, kinds), path });
        expect(result.compressedEntries, `${path} ${workers} ${JSON.stringify(result.skipped).slice(0, 400)}`).toHaveLength(8);
        // Inline, pi's messages are read where they lie: its lines on disk are not needed.
        const linesRoute = workers === 0 ? "messages" : "lines";
        expect(new Set(kinds)).toEqual(new Set([{ file: "lines", memory: "messages", lines: linesRoute }[path]]));
        results.push({ lines: appendedMasked(file, builder.lines.length), spills: spillFiles(file) });
      }
    }
    expect(Object.keys(results[0]!.spills)).toHaveLength(4);
    for (const other of results.slice(1)) {
      expect(other.lines).toEqual(results[0]!.lines);
      expect(other.spills).toEqual(results[0]!.spills);
    }
  });

  it("pi's compact path sends a chain whose line changed under it encoded instead, and archives what pi holds", async () => {
    const builder = mixedSession();
    const reference = builder.writeTemp();
    await compressFile(reference, { workers: 2, path: "memory" });
    const file = builder.writeTemp();
    // A tool result of the fourth chain gets another timestamp in the file, same length: what pi holds in memory is not that line any more.
    const changed = () => {
      const lines = fs.readFileSync(file, "utf8").split("\n");
      const at = lines.findIndex((line) => line.includes('"toolCallId":"c3_1"'));
      lines[at] = lines[at]!.replace(/"timestamp":(\d+)\}\}$/, (_, t: string) => `"timestamp":${String(Number(t) + 1).padStart(t.length, "0")}}}`);
      fs.writeFileSync(file, lines.join("\n"));
    };
    const kinds: string[] = [];
    const runner = createChainRunner(2);
    runners.push(runner);
    const { result } = await compressFile(file, { runner: countingRunner(runner, kinds), path: "lines", afterScan: changed });
    expect(result.compressedEntries).toHaveLength(8);
    expect(result.stats.chainsFromFile).toBe(7);
    expect(kinds.filter((kind) => kind === "messages")).toHaveLength(1);
    expect(appendedMasked(file, builder.lines.length)).toEqual(appendedMasked(reference, builder.lines.length));
    expect(spillFiles(file)).toEqual(spillFiles(reference));
  });

  it.each(["file", "memory"] as const)("archived args equal the session's exactly, odd keys included (%s path)", async (path) => {
    const builder = mixedSession();
    const file = builder.writeTemp();
    await compressFile(file, { workers: 1, path });
    const records = fs.readFileSync(file, "utf8").trim().split("\n").slice(builder.lines.length).map((line) => JSON.parse(line)).flatMap((entry) => entry.data?.toolCalls ?? []);
    const odd = records.find((record: { toolCallId: string }) => record.toolCallId === "odd-keys");
    expect(JSON.stringify(odd.args)).toBe('{"__proto__":{"polluted":true},"constructor":"x","command":"odd"}');
    expect(Object.keys(odd.args)).toEqual(["__proto__", "constructor", "command"]);
  });

  it("a session not written by JSON.stringify (\\/, \\u escapes of plain characters) archives the same bytes on the file path as on the live path", async () => {
    const s = new SessionBuilder();
    for (let c = 0; c < 3; c++) {
      s.chain(`task ${c}`, [
        { id: `k${c}_0`, name: "read", args: { path: `/work/proj/src/é${c}.ts` }, output: `path/to/é ${c} `.repeat(200) },
        { id: `k${c}_1`, name: "bash", args: { command: `cat /tmp/big${c}` }, output: `big/é ${c}\n`.repeat(9000) },
      ]);
    }
    // `/` and `é` occur only inside strings: spelled `\/` and `\u00e9`, every line still parses to the same values.
    const odd = (file: string) => fs.writeFileSync(file, fs.readFileSync(file, "utf8").replaceAll("/", "\\/").replaceAll("é", "\\u00e9"));
    const results = [];
    for (const path of ["file", "memory"] as const) {
      const file = s.writeTemp();
      odd(file);
      const kinds: string[] = [];
      const runner = createChainRunner(path === "file" ? 2 : 0);
      runners.push(runner);
      const { result } = await compressFile(file, { runner: countingRunner(runner, kinds), path });
      expect(result.compressedEntries).toHaveLength(3);
      expect(new Set(kinds)).toEqual(new Set([path === "file" ? "lines" : "messages"]));
      results.push({ lines: appendedMasked(file, s.lines.length), spills: spillFiles(file) });
      // Archived as JSON.stringify writes it, byte for byte (the masked lines above are re-serialised).
      const appended = fs.readFileSync(file, "utf8").trim().split("\n").slice(s.lines.length);
      for (const line of appended) expect(line).toBe(JSON.stringify(JSON.parse(line)));
      expect(appended.join("\n")).toContain("é");
    }
    expect(Object.keys(results[0]!.spills)).toHaveLength(3);
    expect(results[0]).toEqual(results[1]);
  });

  it("a tool result timestamped -0 (JSON.parse keeps the sign; the scan's JSON hand-off writes it as 0) compresses the same with 0 and 2 workers, on both paths", async () => {
    const s = new SessionBuilder();
    for (let c = 0; c < 3; c++) s.chain(`task ${c}`, calls(`z${c}`, 3, c === 1 ? 90_000 : 300));
    const results = [];
    for (const [path, workers] of [["file", 0], ["file", 2], ["memory", 2]] as const) {
      const file = s.writeTemp();
      // The first result of each chain: its timestamp spelled -0 (one of them with a spilled output).
      const lines = fs.readFileSync(file, "utf8").split("\n").map((line) => (/"toolCallId":"z\d_0"/.test(line) ? line.replace(/"timestamp":\d+\}\}$/, '"timestamp":-0}}') : line));
      expect(lines.filter((line) => line.endsWith('"timestamp":-0}}'))).toHaveLength(3);
      fs.writeFileSync(file, lines.join("\n"));
      const runner = createChainRunner(workers);
      runners.push(runner);
      const { result } = await compressFile(file, { runner, path });
      expect(result.skipped).toEqual([]);
      results.push({ lines: appendedMasked(file, s.lines.length), spills: spillFiles(file) });
    }
    expect(results[0]!.lines).toHaveLength(6);
    expect(Object.keys(results[0]!.spills)).toHaveLength(3);
    for (const other of results.slice(1)) expect(other).toEqual(results[0]);
  });

  it("a second compaction appends nothing and reports every chain as already compressed", async () => {
    const file = mixedSession().writeTemp();
    await compressFile(file, { workers: 0 });
    const after = fs.readFileSync(file);
    const second = await compressFile(file, { workers: 0 });
    expect(second.result.compressedEntries).toEqual([]);
    expect(second.result.skipped.map((s) => s.reason)).toEqual(Array(8).fill("already-compressed"));
    expect(fs.readFileSync(file)).toEqual(after);
  });
});

describe("bounded memory", () => {
  it("never has more chains in flight than the window allows", async () => {
    const s = new SessionBuilder();
    for (let c = 0; c < 12; c++) s.chain(`t${c}`, calls(`w${c}`, 2));
    const file = s.writeTemp();
    const inner = createChainRunner(0);
    let inFlight = 0;
    let peak = 0;
    const runner: ChainRunner = {
      workers: 2,
      run: async (task, onStart) => {
        // Started at once, as by a free worker: only the window bounds what is in flight.
        const start = onStart?.() ?? {};
        peak = Math.max(peak, ++inFlight);
        await new Promise((r) => setTimeout(r, 5));
        try {
          return await inner.run(task, () => start);
        } finally {
          inFlight--;
        }
      },
      scan: (task) => inner.scan(task),
      close: async () => undefined,
    };
    const { result } = await compressFile(file, { runner, maxInFlight: 3 });
    expect(result.compressedEntries).toHaveLength(12);
    expect(peak).toBeGreaterThan(1);
    expect(peak).toBeLessThanOrEqual(3);
  });

  it.each(["file", "memory"] as const)("index bytes are written into rooms the main thread hands back, byte-identical to fresh buffers (%s path)", async (path) => {
    const builder = mixedSession();
    const inner = createChainRunner(0);
    const runs = [];
    for (const offerRooms of [false, true]) {
      let offered = 0;
      let reused = 0;
      const runner: ChainRunner = {
        ...inner,
        // Rooms are lent to worker threads only: this runner says it has one (and runs inline).
        workers: 1,
        run: async (task, onStart) => {
          let room: ArrayBuffer | undefined;
          // Slow enough that each chain's index entry is written before the next chain but one starts.
          await new Promise((r) => setTimeout(r, 5));
          const result = await inner.run(task, () => {
            // Asked as the task starts, after the tasks before it ran (the inline runner runs one at a time).
            const start = onStart?.() ?? {};
            room = offerRooms ? start.indexRoom : undefined;
            if (room) offered++;
            return room ? { indexRoom: room } : {};
          });
          if (room && result.indexDataJson.buffer === room) reused++;
          return result;
        },
      };
      const file = builder.writeTemp();
      const { result } = await compressFile(file, { runner, path });
      expect(result.compressedEntries).toHaveLength(8);
      runs.push({ lines: appendedMasked(file, builder.lines.length), spills: spillFiles(file), offered, reused });
    }
    const [fresh, recycled] = runs;
    expect(fresh!.offered).toBe(0);
    // The first tasks find no room yet (a task can start before the one before it is written).
    expect(recycled!.offered).toBeGreaterThanOrEqual(1);
    expect(recycled!.reused).toBeGreaterThanOrEqual(1);
    expect(recycled!.lines).toEqual(fresh!.lines);
    expect(recycled!.spills).toEqual(fresh!.spills);
  });

  it("prepares at most one task per worker ahead of the workers: the rest of the window waits unprepared", async () => {
    const s = new SessionBuilder();
    for (let c = 0; c < 10; c++) s.chain(`t${c}`, calls(`p${c}`, 2));
    const file = s.writeTemp();
    const inner = createChainRunner(0);
    const queued: Array<() => void> = [];
    let started = 0;
    let mostQueued = 0;
    const runner: ChainRunner = {
      ...inner,
      workers: 3,
      run: async (task, onStart) => {
        // A pool whose workers are all busy until the test lets a task start.
        await new Promise<void>((resolve) => {
          queued.push(resolve);
          mostQueued = Math.max(mostQueued, queued.length);
        });
        started++;
        return inner.run(task, onStart);
      },
    };
    const run = compressFile(file, { runner, path: "file" });
    // Let the tasks in one at a time, each once the queue has had time to fill.
    for (let released = 0; released < 10; released++) {
      for (let spin = 0; spin < 200 && queued.length === 0; spin++) await new Promise((r) => setTimeout(r, 5));
      await new Promise((r) => setTimeout(r, 20));
      queued.shift()?.();
    }
    const { result } = await run;
    expect(result.compressedEntries).toHaveLength(10);
    expect(started).toBe(10);
    // The window is 16 + 2 × 3 chains; prepared and waiting were never more than the 3 workers.
    expect(mostQueued).toBe(3);
  });

  it("inline, the next group's tasks run while a group's fsyncs are in flight, never more than one group ahead", async () => {
    const s = new SessionBuilder();
    const chains = COMMIT_GROUP_SIZE * 2 + 4;
    for (let c = 0; c < chains; c++) s.chain(`t${c}`, calls(`f${c}`, 2));
    const file = s.writeTemp();
    const inner = createChainRunner(0);
    let started = 0;
    const runner: ChainRunner = { ...inner, run: (task, onStart) => (started++, inner.run(task, onStart)) };
    // Tasks started when each fsync was asked for, and by the time it was done.
    const syncs: Array<{ asked: number; done: number }> = [];
    const wrapSync = (sync: () => Promise<void>) => async () => {
      const asked = started;
      await sync();
      syncs.push({ asked, done: started });
    };
    const { result } = await compressFile(file, { runner, wrapSync });
    expect(result.compressedEntries).toHaveLength(chains);
    // Two fsyncs per group: the first group's let half of the second group go, then the rest.
    expect(syncs[0]).toEqual({ asked: COMMIT_GROUP_SIZE, done: COMMIT_GROUP_SIZE * 1.5 });
    expect(syncs[1]).toEqual({ asked: COMMIT_GROUP_SIZE * 1.5, done: COMMIT_GROUP_SIZE * 2 });
    expect(Math.max(...syncs.map((sync) => sync.done))).toBe(chains);
  });

  it("writes each chain's index entry as its work arrives, before later chains of its group are done", async () => {
    const s = new SessionBuilder();
    for (let c = 0; c < 6; c++) s.chain(`t${c}`, calls(`g${c}`, 2));
    const file = s.writeTemp();
    const inner = createChainRunner(0);
    const indexLines = () => fs.readFileSync(file, "utf8").split("\n").filter((line) => line.includes('"customType":"context-prune-index"')).length;
    const seenBefore: number[] = [];
    let started = 0;
    const runner: ChainRunner = {
      ...inner,
      run: async (task, onStart) => {
        const k = started++;
        // Chain k waits (a bounded while) until the first k - 1 chains' index entries are on disk:
        // all six chains are one commit group, so only a streaming commit gets them there.
        for (let waited = 0; k > 1 && indexLines() < k - 1 && waited < 3000; waited += 10) await new Promise((r) => setTimeout(r, 10));
        seenBefore.push(indexLines());
        return inner.run(task, onStart);
      },
    };
    const { result } = await compressFile(file, { runner, path: "file" });
    expect(result.compressedEntries).toHaveLength(6);
    expect(seenBefore.slice(2)).toEqual([1, 2, 3, 4].map((n) => expect.toSatisfy((seen: number) => seen >= n)));
    expect(indexLines()).toBe(6);
  });
});
