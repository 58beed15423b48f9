// A chain task's file slice travels in columns (workers/file-slice-columns.ts); the worker must
// read back, line for line, what the plan says each line of the span holds.

import { afterAll, describe, expect, it } from "vitest";
import { REF_LINE_MIN_BYTES } from "../src/core/literal-refs.js";
import { createChainRunner, type ChainRunner } from "../src/main/chain-runner.js";
import { fileSliceOf } from "../src/main/file-slice.js";
import { scanSession } from "../src/main/scan-session.js";
import { modelOf } from "../src/main/session-model.js";
import type { ExpectedLine } from "../src/workers/chain-task.js";
import { expectedLines, FileSliceWriter, sliceBytes } from "../src/workers/file-slice-columns.js";
import { calls, SessionBuilder } from "./helpers/session-builder.js";

/** Output characters that make a line long enough to be looked into for refs, so the scan locates its output. */
const LOCATED = REF_LINE_MIN_BYTES;

const runners: ChainRunner[] = [];
afterAll(async () => {
  await Promise.all(runners.map((r) => r.close()));
});

describe("a file slice in columns", () => {
  it("gives back every line of the span as the plan knows it, located outputs included", async () => {
    const s = new SessionBuilder();
    s.chain("first", [...calls("a", 4, LOCATED), { id: "err", name: "bash", output: "failed ".repeat(LOCATED / 7 + 1), isError: true }, ...calls("b", 3, 20)]);
    const file = s.writeTemp();
    const runner = createChainRunner(0);
    runners.push(runner);
    const model = modelOf(await scanSession(file, runner));
    const inner = model.messages.slice(1, -1);

    const lines = expectedLines(structuredClone(fileSliceOf(model, { inner, innerStart: 1 })));

    // What each line is, read from the model directly.
    const expected = inner.map((message): ExpectedLine => {
      const entry = model.entryOf(message)!;
      const place = model.loaded.locationOf(entry)!;
      const line: ExpectedLine = { byteOffset: place.byteOffset, bytes: place.bytes, line: place.line, id: entry.id, role: message.role, timestamp: message.timestamp };
      const { toolCallId, isError } = message as { toolCallId?: unknown; isError?: unknown };
      if (toolCallId !== undefined) line.toolCallId = toolCallId;
      if (place.output) line.output = { literal: place.output, isError: isError === true };
      return line;
    });
    expect(lines).toEqual(expected);
    expect(lines.filter((line) => line.output).length).toBe(5);
    expect(lines.find((line) => line.toolCallId === "err")?.output?.isError).toBe(true);
    // A span that is not a slice of the model's messages is looked up message by message.
    expect(expectedLines(fileSliceOf(model, { inner: [...inner], innerStart: 0 }))).toEqual(expected);
    expect(sliceBytes(fileSliceOf(model, { inner, innerStart: 1 }))).toBe(expected.reduce((sum, line) => sum + line.bytes, 0));
  });

  it("finds each line by index as a lookup by entry finds it", async () => {
    const s = new SessionBuilder();
    s.chain("one", calls("a", 3, LOCATED));
    s.chain("two", calls("b", 2, 30));
    const runner = createChainRunner(0);
    runners.push(runner);
    const loaded = await scanSession(s.writeTemp(), runner);
    const model = modelOf(loaded);
    expect(loaded.locationsByIndex).toBeDefined();
    loaded.entries.forEach((entry, k) => {
      expect(loaded.locationsByIndex!.location(k)).toEqual(loaded.locationOf(entry));
      expect(loaded.locationsByIndex!.messageChars(k)).toBe(loaded.messageCharsOf(entry));
    });
    model.messages.forEach((message, k) => {
      expect(model.messageEntry(k)).toBe(model.entryOf(message));
      expect(model.messageLocation(k)).toEqual(loaded.locationOf(model.entryOf(message)!));
      expect(model.scannedCharsOf(message)).toBe(loaded.messageCharsOf(model.entryOf(message)!));
    });
  });

  it("refuses more or fewer lines than it was made for", () => {
    const place = { line: 2, byteOffset: 10, bytes: 5, terminated: true };
    const one = new FileSliceWriter("f.jsonl", 1);
    one.add(place, "x", "user", 1, undefined, false);
    expect(() => one.add(place, "y", "user", 2, undefined, false)).toThrow(/got more/);
    expect(() => new FileSliceWriter("f.jsonl", 2).slice()).toThrow(/fewer lines/);
  });
});
