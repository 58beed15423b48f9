/**
 * Issue 45: a malformed `context_edit` must not undo a redaction through the archive. pi 1.6
 * hides the content of a tool result whose latest edit has any replacement other than `null` or
 * `{content: string | array}` (test/malformed-edits-projection.test.ts). Whether the edit came
 * before the output was archived or after, `render`, `query tN`, `--raw`, `--offset`, `--search`
 * and, inside pi, `context_tree_query` (the live edit tracker) and `/pruner compact` never give
 * back the original. Fuzzed edits on an archived session are checked against pi 1.6's own
 * projection: no query or search returns an output text pi's context does not hold.
 */

import fs from "node:fs";
import path from "node:path";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkPattern, type SearchPattern } from "../src/core/archive-search.js";
import { HIDDEN_OUTPUT_TEXT } from "../src/core/context-edits.js";
import { loadHasher } from "../src/core/digest.js";
import { readSession } from "../src/io/read-session.js";
import { readRecordText } from "../src/main/archived-output.js";
import { createChainRunner } from "../src/main/chain-runner.js";
import { searchArchive } from "../src/main/search-archive.js";
import { modelOf } from "../src/main/session-model.js";
import { ensureBuilt, pruneEntries, removeTempDirs, runCli, settle, tempDir } from "./helpers/cli-harness.js";
import { MALFORMED_REPLACEMENTS, replacementArb } from "./helpers/edit-shapes.js";
import { piContexts } from "./helpers/pi-loader.js";
import { PiHost, tempAgentDir } from "./helpers/pi-host.js";
import { SessionLines } from "./helpers/session-lines.js";

beforeAll(() => ensureBuilt());
afterAll(() => removeTempDirs());

/** Output `i`: its secret, a word to search for, and (every third) enough bytes to be spilled. */
const secretOf = (i: number) => `SECRET-${i}-TOKEN`;
const outputOf = (i: number) => `${secretOf(i)} classified payload\n${"x".repeat(i % 3 === 0 ? 70_000 : 300)}\nend`;

/** One chain per malformed shape, each with one output holding its secret. */
function writeChains(file: string): string[] {
  const s = new SessionLines();
  const ids = MALFORMED_REPLACEMENTS.map((_, i) => {
    const { resultIds } = s.chain(`c${i}`, [outputOf(i)]);
    // The reply's thinking, which compression strips, outweighs the chain's compressed form even
    // where an edit hides the output (a chain that would grow is left alone: core/chain-shrink.ts).
    s.message({ role: "assistant", content: [{ type: "thinking", thinking: "t".repeat(3_000) }, { type: "text", text: `chain ${i} done` }], stopReason: "stop" });
    return resultIds[0]!;
  });
  s.write(file);
  return ids;
}

/** Appends a context edit under the session's last entry, as pi 1.6 would (any replacement shape). */
function appendEdit(file: string, targetId: unknown, replacement: unknown): void {
  const lines = fs.readFileSync(file, "utf8").trimEnd().split("\n");
  const last = JSON.parse(lines[lines.length - 1]!) as { id: string };
  const id = `edit${lines.length}`;
  fs.appendFileSync(file, `${JSON.stringify({ type: "context_edit", id, parentId: last.id, timestamp: new Date().toISOString(), targetId, replacement })}\n`);
  settle(file);
}

function refsOf(file: string): string[] {
  return pruneEntries(file)
    .filter((e) => e.customType === "context-prune-chain")
    .flatMap((e) => e.data.toolRefs as string[]);
}

function expectNoSecret(text: string, what: string): void {
  expect(text, what).not.toMatch(/SECRET-\d+-TOKEN/);
}

describe("a malformed edit and the archive, through the CLI and inside pi", () => {
  let dir: string;
  let file: string;
  let resultIds: string[];
  let refs: string[];

  beforeAll(() => {
    dir = tempDir("chainpress-malformed-archive-");
    file = path.join(dir, "s.jsonl");
    resultIds = writeChains(file);
    // Even shapes before the compaction (archived as the projection shows them), odd ones after.
    for (const [i, [, replacement]] of MALFORMED_REPLACEMENTS.entries()) if (i % 2 === 0) appendEdit(file, resultIds[i], replacement);
    const run = runCli(["compact", file, "--workers", "0"]);
    expect(run.status, run.stderr).toBe(0);
    refs = refsOf(file);
    expect(refs).toHaveLength(MALFORMED_REPLACEMENTS.length);
  }, 60_000);

  it("archives what pi's projection shows when the edit came first", () => {
    const records = pruneEntries(file).filter((e) => e.customType === "context-prune-index").flatMap((e) => e.data.toolCalls as Array<{ resultText: string; resultPreview?: string }>);
    expect(records).toHaveLength(MALFORMED_REPLACEMENTS.length);
    for (const [i, record] of records.entries()) if (i % 2 === 0) expectNoSecret(JSON.stringify(record), `record ${i}`);
    const blobs = path.join(dir, `${JSON.parse(fs.readFileSync(file, "utf8").split("\n")[0]!).id}-blobs`);
    for (const name of fs.existsSync(blobs) ? fs.readdirSync(blobs) : []) {
      const text = fs.readFileSync(path.join(blobs, name), "utf8");
      for (const [i] of MALFORMED_REPLACEMENTS.entries()) if (i % 2 === 0) expect(text, name).not.toContain(secretOf(i));
    }
  });

  /** Once: the odd shapes' edits, after their outputs were archived as they were (checked first: the premise). */
  let later = false;
  function appendLaterEdits(): void {
    if (later) return;
    later = true;
    const raw = runCli(["query", file, ...refs, "--raw"]);
    expect(raw.status, raw.stderr).toBe(0);
    for (const [i] of MALFORMED_REPLACEMENTS.entries()) if (i % 2 === 1) expect(raw.out).toContain(secretOf(i));
    for (const [i, [, replacement]] of MALFORMED_REPLACEMENTS.entries()) if (i % 2 === 1) appendEdit(file, resultIds[i], replacement);
  }

  it("render, query tN, --raw, --offset and --search never give back the original", () => {
    appendLaterEdits();
    for (const args of [["render", file], ["render", file, "--text"], ["stats", file], ["query", file, ...refs]]) {
      const run = runCli(args);
      expect(run.status, `${args.join(" ")}: ${run.stderr}`).toBe(0);
      expectNoSecret(run.out, args.join(" "));
    }
    const raw = runCli(["query", file, ...refs, "--raw"]);
    expect(raw.status, raw.stderr).toBe(0);
    expect(raw.out.split("\0")).toEqual(refs.map(() => HIDDEN_OUTPUT_TEXT));
    for (const ref of refs) {
      const page = runCli(["query", file, ref, "--offset", "1", "--json"]);
      expect(page.status, page.stderr).toBe(0);
      expect((JSON.parse(page.out) as { text: string }).text, ref).toBe(HIDDEN_OUTPUT_TEXT);
    }
    for (const args of [["--search", "classified payload", "--json"], ["--search", "SECRET-\\d", "--regex", "--json"], ["--search", "x{50}", "--regex"]]) {
      const search = runCli(["query", file, ...args]);
      expect(search.status, search.stderr).toBe(0);
      expectNoSecret(search.out, args.join(" "));
      if (args.includes("--json")) expect((JSON.parse(search.out) as { hits: unknown[] }).hits, args.join(" ")).toEqual([]);
    }
  }, 120_000);

  it("context_tree_query in pi (the live edit tracker) never gives back the original", async () => {
    appendLaterEdits();
    const host = await PiHost.start(SessionManager.open(file), tempAgentDir());
    try {
      const tool = host.tools.get("context_tree_query")!;
      // As pi calls a tool: with the context whose session manager the edit tracker reads.
      const query = (id: string, params: object) => tool.execute(id, params, undefined, undefined, host.ctx());
      const all = await query("q1", { toolCallIds: refs });
      expectNoSecret(all.content[0]!.text, "toolCallIds");
      expect(all.content[0]!.text).toContain(HIDDEN_OUTPUT_TEXT);
      for (const ref of refs) {
        const page = await query(`p-${ref}`, { toolCallIds: [ref], offset: "1" });
        expectNoSecret(page.content[0]!.text, ref);
      }
      const found = await query("q2", { search: "classified payload" });
      expectNoSecret(found.content[0]!.text, "search");
      expect(found.content[0]!.text).toMatch(/: 0 hits/);
      // A call without pi's context reads the edits of the session the extension loaded.
      const bare = await tool.execute("q3", { toolCallIds: refs });
      expectNoSecret(bare.content[0]!.text, "toolCallIds without a context");
      expect(bare.content[0]!.text).toContain(HIDDEN_OUTPUT_TEXT);
    } finally {
      await host.runtime.runner.close();
    }
  }, 60_000);

  it("/pruner compact in pi archives what pi's projection shows, not the original", async () => {
    const live = path.join(dir, "live.jsonl");
    const ids = writeChains(live);
    for (const [i, [, replacement]] of MALFORMED_REPLACEMENTS.entries()) appendEdit(live, ids[i], replacement);
    const host = await PiHost.start(SessionManager.open(live), tempAgentDir({ workers: 1 }));
    try {
      await host.command("/pruner compact");
      await host.idle();
    } finally {
      await host.runtime.runner.close();
    }
    const records = pruneEntries(live).filter((e) => e.customType === "context-prune-index");
    expect(records.length).toBeGreaterThan(0);
    expectNoSecret(JSON.stringify(records), "records");
    const raw = runCli(["query", live, ...refsOf(live), "--raw"]);
    expect(raw.status, raw.stderr).toBe(0);
    expectNoSecret(raw.out, "query --raw");
  }, 60_000);
});

describe("fuzzed edits on an archived session, against pi 1.6's projection", () => {
  it("no query or search of 48 fuzzed sessions gives an output text pi's context does not hold", async () => {
    const dir = tempDir("chainpress-fuzzed-archive-");
    const base = path.join(dir, "base.jsonl");
    const ids = writeChains(base);
    const run = runCli(["compact", base, "--workers", "0"]);
    expect(run.status, run.stderr).toBe(0);
    const edits = fc.array(fc.record({ pick: fc.nat(), replacement: replacementArb }), { minLength: 1, maxLength: 6 });
    // Copies beside the base share its blobs folder (the session id names it).
    const files = fc.sample(edits, { numRuns: 48, seed: 4545 }).map((sample, k) => {
      const copy = path.join(dir, `copy-${k}.jsonl`);
      fs.copyFileSync(base, copy);
      for (const { pick, replacement } of sample) appendEdit(copy, ids[pick % ids.length], replacement);
      return copy;
    });
    const pi = await piContexts("1.6.0", files);
    const hasher = await loadHasher();
    const runner = createChainRunner(0);
    let hidden = 0;
    try {
      for (const [k, copy] of files.entries()) {
        const shown = new Set(JSON.stringify(pi[k]).match(/SECRET-\d+-TOKEN/g) ?? []);
        const model = modelOf(await readSession(copy, { malformedLines: "skip" }));
        const unshown = (text: string) => (text.match(/SECRET-\d+-TOKEN/g) ?? []).filter((secret) => !shown.has(secret));
        for (const record of model.state.records.values()) {
          const read = await readRecordText(record, model.editedOutputs, hasher, model.blobDir);
          expect(read.ok).toBe(true);
          expect(unshown(read.ok ? read.text : ""), `${copy} ${record.toolCallId}`).toEqual([]);
        }
        const scope = { state: model.state, editedOutputs: model.editedOutputs, blobDir: model.blobDir, runner };
        const found = await searchArchive(scope, { pattern: checkPattern("classified payload", false) as SearchPattern, limit: 50 });
        for (const hit of found.hits) {
          const record = [...model.state.records.entries()].find(([key]) => model.state.displayRef(key) === hit.ref)![1];
          expect(shown.has(secretOf(ids.indexOf(resultIdOf(model, record.toolCallId)))), `${copy} search ${hit.ref}`).toBe(true);
        }
        hidden += ids.length - shown.size;
      }
    } finally {
      await runner.close();
    }
    // The fuzz reaches the case at hand: outputs pi hides.
    expect(hidden).toBeGreaterThan(30);
  }, 120_000);
});

/** The tool result entry id of a call, in a model of the sessions above. */
function resultIdOf(model: ReturnType<typeof modelOf>, toolCallId: string): string {
  const entry = model.branch.find((e) => e.type === "message" && (e as { message: { role: string; toolCallId?: string } }).message.role === "toolResult" && (e as { message: { toolCallId?: string } }).message.toolCallId === toolCallId);
  return entry!.id;
}
