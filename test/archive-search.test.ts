/**
 * Searching the archive: the pattern rules and ranking (core/archive-search.ts), and whole
 * searches on real worker threads over a compacted session's inline and spilled outputs
 * (main/search-archive.ts), through `chainpress query --search` and context_tree_query: filters,
 * limits, bounded results, clear errors, and a deadline that stops a runaway expression.
 */

import fs from "node:fs";
import path from "node:path";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkPattern, compareHits, PatternMatcher, searchOutput, type SearchDoc, type SearchPattern } from "../src/core/archive-search.js";
import { createChainRunner } from "../src/main/chain-runner.js";
import { searchDeadline, SearchDeadlineError } from "../src/main/runner-contract.js";
import type { SearchTask } from "../src/workers/search-task.js";
import { searchArchive } from "../src/main/search-archive.js";
import { loadSessionModel } from "../src/main/session-model.js";
import { ensureBuilt, removeTempDirs, runCli, tempDir } from "./helpers/cli-harness.js";
import { PiHost, tempAgentDir } from "./helpers/pi-host.js";
import { SessionLines } from "./helpers/session-lines.js";

beforeAll(() => ensureBuilt());
afterAll(() => removeTempDirs());

const doc = (ref: string, order: number, argsJson = "{}"): SearchDoc => ({ ref, toolCallId: ref, toolName: "bash", target: "", blockId: "b1", argsJson, order });
const literal = (text: string) => checkPattern(text, false) as SearchPattern;
const matcher = (text: string) => new PatternMatcher(literal(text));

describe("patterns and ranking", () => {
  it("refuses an empty text and an invalid expression with a clear message", () => {
    expect(checkPattern("  ", false)).toMatch(/search text is empty/);
    expect(checkPattern("(unclosed", true)).toMatch(/^invalid regular expression "\(unclosed": /);
  });

  it("a literal is case-insensitive by default; a regular expression on request", () => {
    const hit = searchOutput(doc("t1", 1), "alpha\nError: Disk full\nomega", matcher("error: disk"))!;
    expect(hit.lines).toEqual([{ line: 2, text: "Error: Disk full" }]);
    expect(searchOutput(doc("t1", 1), "Error here", new PatternMatcher(checkPattern("error", false, true) as SearchPattern))).toBeUndefined();
    expect(searchOutput(doc("t1", 1), "code 404 then 500", new PatternMatcher(checkPattern("\\b[45]\\d\\d\\b", true) as SearchPattern))!.matches).toBe(2);
  });

  it("an output holding the text as a whole line ranks above one that only contains it", () => {
    const pattern = matcher("import fs from 'node:fs';");
    const inside = searchOutput(doc("t1", 9), "// import fs from 'node:fs'; was here\n".repeat(5), pattern)!;
    const whole = searchOutput(doc("t2", 1), "x\nimport fs from 'node:fs';\ny", pattern)!;
    expect([inside, whole].sort(compareHits).map((h) => h.ref)).toEqual(["t2", "t1"]);
  });

  it("a call whose args name the text is found even when its output does not hold it", () => {
    const hit = searchOutput(doc("t3", 1, JSON.stringify({ path: "src/core/write-queue.ts" })), "export class Queue {}", matcher("write-queue.ts"))!;
    expect(hit).toMatchObject({ inArgs: true, matches: 0 });
  });
});

/** A session of three closed chains: small outputs and spilled ones, with a marker line in exactly one output each. */
function writeSession(file: string): void {
  const s = new SessionLines();
  const big = (tag: string) => `${Array.from({ length: 1_500 }, (_, i) => `${tag} row ${i} ${"z".repeat(40)}`).join("\n")}\n`;
  s.chain("one", ["first output\nUNIQUE-LINE-ALPHA\nend", big("spilled-one")]);
  s.reply("one done");
  s.chain("two", ["npm test\nFAIL src/a.test.ts\n1 failed", `${big("spilled-two")}UNIQUE-LINE-BETA\n`]);
  s.reply("two done");
  // Padded so that compressing the chain shrinks the context (core/chain-shrink.ts).
  s.chain("three", [`error: ENOENT\nUNIQUE-LINE-GAMMA\n${"stack frame\n".repeat(60)}`]);
  s.reply("three done");
  s.write(file);
}

describe("searching a compacted session", () => {
  let file: string;
  beforeAll(() => {
    file = path.join(tempDir("chainpress-search-"), "s.jsonl");
    writeSession(file);
    const run = runCli(["compact", file, "--workers", "0", "--spill-threshold", "32768"]);
    expect(run.status, run.stderr).toBe(0);
  });

  const search = (...args: string[]) => {
    const run = runCli(["query", file, "--json", "--search", ...args]);
    expect(run.status, run.stderr).toBe(0);
    return JSON.parse(run.out) as { hits: Array<{ ref: string; toolName: string; blockId: string; lines: Array<{ line: number; text: string }> }>; total: number; shown: number; searched: number };
  };

  it("finds a line in an inline output and in a spilled one, with its line number", () => {
    expect(search("unique-line-alpha").hits.map((h) => h.ref)).toEqual(["t1"]);
    const beta = search("UNIQUE-LINE-BETA");
    expect(beta.hits.map((h) => [h.ref, h.blockId])).toEqual([["t4", "b2"]]);
    expect(beta.hits[0]!.lines).toEqual([{ line: 1501, text: "UNIQUE-LINE-BETA" }]);
    expect(beta.searched).toBe(5);
  });

  it("filters by tool and by chain, limits the hits and counts what it left out", () => {
    expect(search("row", "--block", "b1").hits.map((h) => h.ref)).toEqual(["t2"]);
    expect(search("row", "--tool", "read").total).toBe(0);
    const limited = search("UNIQUE-LINE", "--limit", "2");
    expect([limited.total, limited.shown]).toEqual([3, 2]);
    expect(search("unique-line-(alpha|gamma)", "--regex").hits.map((h) => h.ref).sort()).toEqual(["t1", "t5"]);
  });

  it("the model's text is bounded and says how to read a hit", () => {
    const run = runCli(["query", file, "--search", "row", "--limit", "1"]);
    expect(run.out).toContain('1 more hit not shown: raise limit (up to 50), or narrow with toolNames or blockId.');
    expect(run.out).toContain('Read one: context_tree_query {"toolCallIds":["t');
    expect(run.out.length).toBeLessThan(2_000);
  });

  it("bad input is a usage error naming the problem", () => {
    const empty = runCli(["query", file, "--search", ""]);
    expect([empty.status, empty.stderr]).toEqual([2, "chainpress: search text is empty: give the words or the expression to find\n"]);
    expect(runCli(["query", file, "--search", "(", "--regex"]).stderr).toMatch(/invalid regular expression/);
  });

  it("an inline runner searches on a thread of its own, reused by later searches and closed with it", async () => {
    const model = await loadSessionModel(file);
    const inline = createChainRunner(0);
    const pool = createChainRunner(1);
    try {
      const scope = { state: model.state, editedOutputs: new Map(), blobDir: model.blobDir };
      const request = { pattern: literal("UNIQUE-LINE"), limit: 10 };
      const onPool = await searchArchive({ ...scope, runner: pool }, request);
      expect(onPool.hits.length).toBeGreaterThan(1);
      for (let i = 0; i < 2; i++) expect(await searchArchive({ ...scope, runner: inline }, request)).toEqual(onPool);
    } finally {
      await Promise.all([inline.close(), pool.close()]);
    }
  });

  it("one deadline covers every task of a search: those still waiting for a thread never start", async () => {
    const runner = createChainRunner(1);
    const runaway: SearchTask = {
      kind: "search-archive",
      pattern: checkPattern("(z+)+!", true) as SearchPattern,
      docs: [{ ref: "t1", toolCallId: "t1", toolName: "bash", target: "", blockId: null, args: {}, order: 0, source: { kind: "inline", text: `${"z".repeat(40)}?` } }],
    };
    try {
      const started = performance.now();
      const deadline = searchDeadline(1_000);
      const outcomes = await Promise.allSettled([0, 1, 2].map(() => runner.search(runaway, deadline)));
      for (const outcome of outcomes) expect(outcome.status === "rejected" && outcome.reason instanceof SearchDeadlineError).toBe(true);
      // One deadline per task would have taken three seconds on the one thread.
      expect(performance.now() - started).toBeLessThan(2_500);
    } finally {
      await runner.close();
    }
  });

  it("a runaway regular expression costs one clear error at the deadline, on a worker thread", async () => {
    const model = await loadSessionModel(file);
    const runner = createChainRunner(1);
    try {
      const started = performance.now();
      const pattern = checkPattern("(z+)+!", true) as SearchPattern;
      await expect(searchArchive({ state: model.state, editedOutputs: new Map(), blobDir: model.blobDir, runner, deadlineMs: 400 }, { pattern, limit: 5 })).rejects.toBeInstanceOf(SearchDeadlineError);
      expect(performance.now() - started).toBeLessThan(5_000);
      // The pool still works afterwards.
      const after = await searchArchive({ state: model.state, editedOutputs: new Map(), blobDir: model.blobDir, runner }, { pattern: literal("UNIQUE-LINE-GAMMA"), limit: 5 });
      expect(after.hits.map((h) => h.ref)).toEqual(["t5"]);
    } finally {
      await runner.close();
    }
  });

  it("context_tree_query searches and pages in pi", async () => {
    const host = await PiHost.start(SessionManager.open(file), tempAgentDir());
    const tool = host.tools.get("context_tree_query")!;
    const found = await tool.execute("q1", { search: "UNIQUE-LINE-BETA" });
    expect(found.content[0]!.text).toMatch(/^Search "UNIQUE-LINE-BETA" \(literal, case-insensitive\): 1 hit in 5 archived outputs; best first:\n1\. t4 bash run two 1 \(b2, /);
    const page = await tool.execute("q2", { toolCallIds: ["t4"], offset: "1501" });
    expect(page.content[0]!.text).toBe("UNIQUE-LINE-BETA\n\n[Page of t4: lines 1501-1502 of 1502; end of output]");
    await expect(tool.execute("q3", { search: "x", toolCallIds: ["t1"] })).rejects.toThrow(/either search .* or toolCallIds/);
    await expect(tool.execute("q4", { toolCallIds: ["t1", "t2"], offset: "2" })).rejects.toThrow(/exactly one ref/);
    await host.runtime.runner.close();
  });

  it("the pages of a spilled output, concatenated, are the output", () => {
    const whole = runCli(["query", file, "t4", "--raw"]).stdout;
    let joined = "";
    for (let offset: string | null = "1"; offset !== null; ) {
      const page = JSON.parse(runCli(["query", file, "t4", "--offset", offset, "--json"]).out) as { text: string; next: string | null };
      joined += page.text;
      offset = page.next;
    }
    expect(Buffer.from(joined, "utf8").equals(whole)).toBe(true);
    expect(fs.existsSync(file)).toBe(true);
  });
});
