// The parallel shard scan (main/scan-session.ts) must read a session exactly as the streaming
// reader does: same entries (up to lightening), same line numbers and byte ranges, same warnings,
// same errors naming the same line, wherever the shard boundaries fall and whatever the pool size.

import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { realJsonLength } from "../src/core/light-placeholder.js";
import type { MessageEntry } from "../src/core/session-types.js";
import { readSession, type LoadedSession } from "../src/io/read-session.js";
import { SessionFileError } from "../src/io/session-errors.js";
import { scanSession } from "../src/main/scan-session.js";
import { REAL_SESSIONS_DIR, REPO_ROOT } from "./helpers/fixture-paths.js";
import { scanScratch } from "./helpers/scan-scratch.js";

const { runner, writeTemp } = scanScratch("chainpress-scan-");

/** What both readers must agree on; message lengths compare the scan's measure with the real JSON. */
function summary(loaded: LoadedSession, full?: LoadedSession) {
  return {
    header: loaded.header,
    entries: loaded.entries.map((entry, i) => {
      const place = loaded.locationOf(entry)!;
      const real = full?.entries[i] as MessageEntry | undefined;
      return {
        id: entry.id,
        parentId: entry.parentId,
        type: entry.type,
        line: place.line,
        byteOffset: place.byteOffset,
        bytes: place.bytes,
        ...(real?.type === "message" ? { chars: place.messageChars ?? realJsonLength((entry as MessageEntry).message) } : {}),
      };
    }),
    warnings: loaded.warnings.map((w) => [w.code, w.line, w.message]),
    truncatedTail: loaded.truncatedTail,
    missingFinalNewline: loaded.missingFinalNewline,
    joinedLines: loaded.joinedLines,
    originalVersion: loaded.originalVersion,
    byteLength: loaded.byteLength,
  };
}

function expected(full: LoadedSession) {
  const base = summary(full, full);
  base.entries = base.entries.map((e, i) => {
    const entry = full.entries[i] as MessageEntry;
    return entry.type === "message" ? { ...e, chars: JSON.stringify(entry.message).length } : e;
  });
  return base;
}

async function errorOf(read: Promise<unknown>): Promise<SessionFileError> {
  const error = await read.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(SessionFileError);
  return error as SessionFileError;
}

const header = `{"type":"session","version":3,"id":"s-1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}`;
const line = (id: string, parentId: string | null, text: string) =>
  JSON.stringify({ type: "message", id, parentId, timestamp: "2026-01-01T00:00:01.000Z", message: { role: "toolResult", toolCallId: `c-${id}`, toolName: "bash", content: [{ type: "text", text }], isError: false, timestamp: 1 } });

describe("scanSession reads as readSession does", () => {
  const files = [
    path.join(REPO_ROOT, "fixtures", "large-sessions", "default-session.jsonl"),
    path.join(REAL_SESSIONS_DIR, "session.jsonl"),
    path.join(REAL_SESSIONS_DIR, "compact.jsonl"),
  ];
  it.each(files)("%s: every shard size, 0 and 2 workers", async (file) => {
    const want = expected(await readSession(file));
    // undefined: the shards' default sizes, shrinking over the tail (core/shard-sizes.ts).
    for (const [workers, shardBytes] of [[0, 1], [0, 4096], [2, 65_536], [2, 1 << 30], [2, undefined]] as const) {
      expect(summary(await scanSession(file, runner(workers), { shardBytes }), await readSession(file)), `${workers} workers, ${shardBytes ?? "default"}-byte shards`).toEqual(want);
    }
  });

  it("a hand-made file with every kind of line: blank lines, BOM, glued entries, long outputs, no final newline", async () => {
    const long = "é\"\\\n\u0001😀".repeat(3000);
    const lines = [`\uFEFF${header}`, "", line("a1", null, long), "   ", `${line("b2", "a1", "x")}${line("c3", "b2", "y")}`, line("d4", "a1", long.slice(1))];
    const file = writeTemp(lines.join("\n"));
    const want = expected(await readSession(file));
    expect(want.joinedLines).toEqual([5]);
    expect(want.missingFinalNewline).toBe(true);
    for (const shardBytes of [1, 7, 100, 1 << 20]) expect(summary(await scanSession(file, runner(2), { shardBytes }), await readSession(file))).toEqual(want);
  });

  it.each([
    ["invalid UTF-8", Buffer.concat([Buffer.from(`${header}\n${line("a1", null, "x")}\n`), Buffer.from([0x7b, 0xff, 0x7d, 0x0a]), Buffer.from(`${line("b2", "a1", "y")}\n`)]), "invalid-utf8", 3],
    ["malformed JSON", `${header}\n${line("a1", null, "x")}\n${line("b2", "a1", "y")}\n{"type":\n`, "malformed-line", 4],
    ["no header", `${line("a1", null, "x")}\n`, "not-a-session", 1],
    ["an entry without an id", `${header}\n{"type":"message","parentId":null}\n`, "malformed-line", 2],
  ])("%s: the same error on the same line", async (_, content, code, lineNumber) => {
    const file = writeTemp(content);
    const theirs = await errorOf(readSession(file));
    for (const shardBytes of [1, 50, 1 << 20]) {
      const ours = await errorOf(scanSession(file, runner(2), { shardBytes }));
      expect([ours.code, ours.line, ours.message]).toEqual([code, lineNumber, theirs.message]);
    }
  });

  it("a truncated last line and a line over the limit", async () => {
    const truncated = writeTemp(`${header}\n${line("a1", null, "x")}\n{"type":"message","id":"b2`);
    expect(summary(await scanSession(truncated, runner(2), { shardBytes: 10 }))).toEqual(summary(await readSession(truncated)));
    const tooLong = writeTemp(`${header}\n${line("a1", null, "x".repeat(5000))}\n`);
    const theirs = await errorOf(readSession(tooLong, { maxLineBytes: 1000 }));
    const ours = await errorOf(scanSession(tooLong, runner(2), { maxLineBytes: 1000, shardBytes: 64 }));
    expect([ours.code, ours.line, ours.message]).toEqual(["line-too-long", 2, theirs.message]);
  });

  it("a message entry keeps no ISO time of its own; a branch summary keeps its (the message pi derives from it is timed by it)", async () => {
    const summaryLine = JSON.stringify({ type: "branch_summary", id: "s2", parentId: "a1", timestamp: "2026-01-01T00:00:02.000Z", fromId: "a1", summary: "earlier work" });
    const file = writeTemp([header, line("a1", null, "x"), summaryLine].join("\n") + "\n");
    for (const workers of [0, 2]) {
      const scanned = await scanSession(file, runner(workers));
      const [message, branchSummary] = scanned.entries;
      expect(message!.type).toBe("message");
      expect(message!.timestamp).toBeUndefined();
      expect((message as MessageEntry).message.timestamp).toBe(1);
      expect(branchSummary!.timestamp).toBe("2026-01-01T00:00:02.000Z");
    }
  });

  it("a missing file and a folder are named clearly", async () => {
    expect((await errorOf(scanSession(path.join(os.tmpdir(), "chainpress-no-such.jsonl"), runner(0)))).code).toBe("not-found");
    const folder = await errorOf(scanSession(os.tmpdir(), runner(0)));
    expect(folder.message).toContain("is a folder");
  });
});
