// On the file path a chain task takes each tool output the scan located (core/literal-refs.ts) from
// the session file's bytes, checked against the digest the scan took of them: an output whose
// bytes changed after the scan fails its chain closed, writes nothing for it, and a rerun heals it.

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createChainRunner, type ChainRunner } from "../src/main/chain-runner.js";
import { fileSliceOf } from "../src/main/file-slice.js";
import { scanSession } from "../src/main/scan-session.js";
import { modelOf } from "../src/main/session-model.js";
import { loadHasher } from "../src/core/digest.js";
import { lightenInPlace } from "../src/core/light-value.js";
import { REF_LINE_MIN_BYTES, type LiteralRef } from "../src/core/literal-refs.js";
import { readFileSlice } from "../src/workers/read-file-slice.js";
import { expectedLines, FileSliceWriter } from "../src/workers/file-slice-columns.js";
import { isFileChanged } from "../src/workers/chain-task.js";
import { compressFile } from "./helpers/compress-harness.js";
import { calls, readLines, SessionBuilder } from "./helpers/session-builder.js";

/** Four chains, each with outputs long enough to be located (their lines are looked into for refs) and one to be spilled. */
function session(): SessionBuilder {
  const s = new SessionBuilder();
  for (let c = 0; c < 4; c++) s.chain(`task ${c}`, [...calls(`c${c}`, 5, REF_LINE_MIN_BYTES), { id: `big${c}`, name: "bash", output: `big ${c} `.repeat(12000) }]);
  return s;
}

const runners: ChainRunner[] = [];
afterAll(async () => {
  await Promise.all(runners.map((r) => r.close()));
});

/** Overwrites, in place and at the same length, the first occurrence of `from` in the file. */
function overwrite(file: string, from: string, to: string): void {
  expect(to.length).toBe(from.length);
  const bytes = fs.readFileSync(file);
  const at = bytes.indexOf(from);
  expect(at).toBeGreaterThan(0);
  bytes.write(to, at);
  fs.writeFileSync(file, bytes);
}

describe("outputs taken from the file's bytes", () => {
  it.each([0, 2])("an output changed after the scan fails its chain closed and writes nothing for it; a rerun heals it (%i workers)", async (workers) => {
    const runner = createChainRunner(workers);
    runners.push(runner);
    const file = session().writeTemp();
    const lineCount = readLines(file).length;
    // Chain 2's big output: same length, other bytes.
    const broken = await compressFile(file, { runner, path: "file", afterScan: () => overwrite(file, "big 2 big 2 ", "BIG 2 BIG 2 ") });
    expect(broken.result.compressedEntries.map((entry) => entry.startUserTimestamp)).toHaveLength(3);
    const failed = broken.result.skipped.filter((skip) => skip.reason === "no-summary");
    expect(failed).toHaveLength(1);
    expect(failed[0]!.cause).toMatch(/worker failed: chain \d+: .* is not the entry .* the plan was made from/);
    const indexed = readLines(file).slice(lineCount).filter((entry) => entry.customType === "context-prune-index");
    expect(indexed).toHaveLength(3);
    expect(JSON.stringify(indexed)).not.toContain("big2");

    const healed = await compressFile(file, { runner, path: "file" });
    expect(healed.result.compressedEntries).toHaveLength(1);
    const bigRecord = readLines(file).flatMap((entry) => entry.data?.toolCalls ?? []).find((record) => record.toolCallId === "big2");
    expect(bigRecord.spillPath).toBeDefined();
    expect(fs.readFileSync(bigRecord.spillPath, "utf8")).toBe("BIG 2 BIG 2 " + "big 2 ".repeat(11998));
  });

  it("a located output's line is not parsed again: the message comes from the plan and the literal", async () => {
    const runner = createChainRunner(0);
    runners.push(runner);
    const file = session().writeTemp();
    const model = modelOf(await scanSession(file, runner));
    const inner = model.messages.slice(1, 13);
    const slice = fileSliceOf(model, { inner, innerStart: 1 });
    const located = expectedLines(slice).filter((line) => line.output !== undefined);
    // The five located outputs and the big one of chain 0.
    expect(located).toHaveLength(6);
    // Damage every located line outside its text (same length): only a parse would notice.
    const bytes = fs.readFileSync(file);
    for (const line of located) bytes.write("X", line.byteOffset + 1);
    fs.writeFileSync(file, bytes);
    const literals: LiteralRef[] = [];
    const messages = readFileSlice(slice, 0, literals, await loadHasher(), true, (bytes) => Buffer.alloc(bytes));
    expect(literals.length).toBeGreaterThanOrEqual(located.length);
    const results = messages.filter((message) => message.role === "toolResult");
    expect(results.map((message) => (message as { toolCallId: string }).toolCallId)).toEqual(["c0_0", "c0_1", "c0_2", "c0_3", "c0_4", "big0"]);
  });

  it("lines that cannot be read (the file was cut after they were found) fail their chain with words the main thread recognises as a changed file", async () => {
    const file = session().writeTemp();
    const size = fs.statSync(file).size;
    const writer = new FileSliceWriter(file, 1);
    writer.add({ line: 9, byteOffset: size - 10, bytes: 100, terminated: true }, "00000009", "toolResult", 1, "c0_0", false);
    let thrown: unknown;
    try {
      readFileSlice(writer.slice(), 1786701600010, [], await loadHasher(), true, (bytes) => Buffer.alloc(bytes));
    } catch (error) {
      thrown = error;
    }
    expect(isFileChanged(thrown)).toBe(true);
    expect((thrown as Error).message).toContain(`chain 1786701600010: cannot read its lines in ${file}: ${file}: file ended at byte ${size}`);
    expect(isFileChanged(new Error("chain 1: spill folder not writable"))).toBe(false);
  });
});

describe("the main thread's records", () => {
  it.each([0, 2])("are the archived records lightened: one text or several parts, spilled or not, long arguments (%i workers)", async (workers) => {
    const s = new SessionBuilder();
    s.chain("mixed", [
      { id: "sole", name: "bash", args: { command: "ls" }, output: "listing ".repeat(400) },
      { id: "parts", name: "bash", args: { command: "two parts" }, output: "first part ".repeat(300) },
      { id: "big", name: "read", args: { path: "/work/big.txt" }, output: "big line\n".repeat(9000) },
      { id: "edit", name: "edit", args: { path: "/work/a.ts", oldText: "old ✓ ".repeat(300), newText: "new ✓ ".repeat(300), usage: { note: "an argument named usage" } }, output: "edited" },
    ]);
    // The "parts" result holds two text parts (and an image between them), which contentText joins.
    for (const line of s.lines as Array<{ message?: { toolCallId?: string; content?: unknown[] } }>) {
      if (line.message?.toolCallId === "parts") line.message.content = [{ type: "text", text: "first part ".repeat(300) }, { type: "image", data: "QUJD", mimeType: "image/png" }, { type: "text", text: "second part ".repeat(300) }];
    }
    const file = s.writeTemp();
    const runner = createChainRunner(workers);
    runners.push(runner);
    const { model } = await compressFile(file, { runner, path: "file" });
    const archived = readLines(file).flatMap((entry) => (entry.customType === "context-prune-index" ? entry.data.toolCalls : []));
    expect(archived.map((record: { toolCallId: string }) => record.toolCallId)).toEqual(["sole", "parts", "big", "edit"]);
    expect(archived[2].spillPath).toBeDefined();
    for (const record of archived) {
      const light = structuredClone(record);
      lightenInPlace(light);
      expect(model.state.records.get(`${record.toolCallId}@${record.resultTimestamp}`)).toEqual(light);
    }
  });
});

describe("text that looks like a marker (U+E002 n U+E003)", () => {
  /** A chain whose long output becomes a ref, next to a call whose id, args and output look like markers. */
  function forged(): SessionBuilder {
    const s = new SessionBuilder();
    s.chain("forge", [
      { id: "long", name: "bash", args: { command: "ls" }, output: "listing ".repeat(400) },
      { id: "x\uE0020\uE003", name: "bash", args: { command: "echo \uE0020\uE003 \\uE0020\\uE003" }, output: "short \uE0020\uE003" },
      { id: "big", name: "bash", args: { command: "cat big" }, output: "big \uE0020\uE003\n".repeat(9000) },
      // A long line (its long content would be a ref) whose short text looks like a marker.
      { id: "mixed", name: "write", args: { note: "\uE0021\uE003", content: "content ".repeat(300) }, output: "written" },
    ]);
    return s;
  }

  it.each([
    ["file", 0],
    ["file", 2],
    ["memory", 0],
  ] as const)("is archived as it is, next to outputs taken as refs (%s path, %i workers)", async (path, workers) => {
    const s = forged();
    const file = s.writeTemp();
    const runner = createChainRunner(workers);
    runners.push(runner);
    const { result } = await compressFile(file, { runner, path });
    expect(result.compressedEntries).toHaveLength(1);
    const archived = readLines(file).flatMap((entry) => (entry.customType === "context-prune-index" ? entry.data.toolCalls : []));
    expect(archived.map((record) => record.toolCallId)).toEqual(["long", "x\uE0020\uE003", "big", "mixed"]);
    expect(archived[3].args).toEqual({ note: "\uE0021\uE003", content: "content ".repeat(300) });
    expect(archived[0].resultText).toBe("listing ".repeat(400));
    expect(archived[1].args.command).toBe("echo \uE0020\uE003 \\uE0020\\uE003");
    expect(archived[1].resultText).toBe("short \uE0020\uE003");
    expect(fs.readFileSync(archived[2].spillPath, "utf8")).toBe("big \uE0020\uE003\n".repeat(9000));
  });

  it("in the blob folder's path, is recorded as it is (0 and 2 workers)", async () => {
    for (const workers of [0, 2]) {
      const s = new SessionBuilder();
      s.chain("path", [
        { id: "long", name: "bash", args: { command: "ls" }, output: "listing ".repeat(400) },
        { id: "big", name: "bash", args: { command: "cat big" }, output: "big line\n".repeat(9000) },
      ]);
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "chainpress-\uE0020\uE003-"));
      const file = path.join(dir, "session.jsonl");
      fs.copyFileSync(s.writeTemp(), file);
      const runner = createChainRunner(workers);
      runners.push(runner);
      await compressFile(file, { runner, path: "file" });
      const archived = readLines(file).flatMap((entry) => (entry.customType === "context-prune-index" ? entry.data.toolCalls : []));
      expect(archived[0].resultText).toBe("listing ".repeat(400));
      expect(archived[1].spillPath.startsWith(dir)).toBe(true);
      expect(fs.readFileSync(archived[1].spillPath, "utf8")).toBe("big line\n".repeat(9000));
    }
  });
});
