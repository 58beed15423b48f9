// The streamed migration (main/migrate-scanned.ts) rewrites a version-1/2 file a line at a time
// from its lightened scan. Its bytes must be exactly those of the in-memory migration
// (migrateFileInPlace on the fully read file), whatever the pool size and the shard boundaries.

import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { migrateFileInPlace } from "../src/io/migrate-file.js";
import { readSession } from "../src/io/read-session.js";
import { SessionFileError } from "../src/io/session-errors.js";
import { migrateScannedFile } from "../src/main/migrate-scanned.js";
import { scanSession } from "../src/main/scan-session.js";
import { REAL_SESSIONS_DIR } from "./helpers/fixture-paths.js";
import { scanScratch } from "./helpers/scan-scratch.js";

const { runner, writeTemp: tempFile } = scanScratch("chainpress-migrate-scanned-");

/** The in-memory migration's bytes for `content`: the reference. */
async function inMemoryBytes(content: string | Buffer): Promise<Buffer> {
  const file = tempFile(content);
  await migrateFileInPlace(await readSession(file), { dropTruncatedTail: true });
  return fs.readFileSync(file);
}

async function streamedBytes(content: string | Buffer, workers: number, shardBytes?: number): Promise<Buffer> {
  const file = tempFile(content);
  const scanned = await scanSession(file, runner(workers), shardBytes === undefined ? {} : { shardBytes });
  await migrateScannedFile(scanned, { dropTruncatedTail: true });
  expect(fs.readdirSync(path.dirname(file))).toEqual([path.basename(file)]); // no temporary copy left
  return fs.readFileSync(file);
}

const sha1 = (bytes: Buffer) => createHash("sha1").update(bytes).digest("hex");

/** A version-1 file with what the migration has to get right: ids, compactions, glued lines, old roles, bulk. */
function v1Session(): string {
  const big = `first line é☃ "quoted"\n${"x\ty\\z ".repeat(20_000)}`;
  const lines: unknown[] = [
    { type: "session", id: "sess-v1", timestamp: "2025-01-01T00:00:00.000Z", cwd: "/w" },
    { type: "message", timestamp: "2025-01-01T00:00:01.000Z", message: { role: "user", content: "hello", timestamp: 1 } },
    {
      type: "message",
      timestamp: "2025-01-01T00:00:02.000Z",
      message: { role: "assistant", content: [{ type: "toolCall", id: "c1", name: "bash", arguments: { command: "cat big", note: "n".repeat(600) } }], usage: { input: 1, output: 2, cacheRead: 0, cacheWrite: 0, totalTokens: 3 }, stopReason: "toolUse", timestamp: 2 },
    },
    { type: "message", timestamp: "2025-01-01T00:00:03.000Z", message: { role: "toolResult", toolCallId: "c1", toolName: "bash", content: [{ type: "text", text: big }], isError: false, timestamp: 3 } },
    { type: "message", timestamp: "2025-01-01T00:00:04.000Z", message: { role: "hookMessage", customType: "note", content: "from a hook", display: true, timestamp: 4 } },
    { type: "compaction", timestamp: "2025-01-01T00:00:05.000Z", summary: "s".repeat(300), firstKeptEntryIndex: 2, tokensBefore: 10 },
    // Points past itself: pi has no id for it yet and drops the field.
    { type: "compaction", timestamp: "2025-01-01T00:00:06.000Z", summary: "later", firstKeptEntryIndex: 40, tokensBefore: 11 },
    { type: "session", id: "stray", timestamp: "2025-01-01T00:00:07.000Z", cwd: "/w" },
    { type: "message", timestamp: "2025-01-01T00:00:08.000Z", message: { role: "assistant", content: [{ type: "text", text: "done ".repeat(100) }], stopReason: "stop", timestamp: 8 } },
  ];
  const text = lines.map((line) => JSON.stringify(line));
  // A lost newline: two entries glued on one line (kept, each on a line of its own, by the migration).
  const glued = `${JSON.stringify({ type: "message", timestamp: "t9", message: { role: "user", content: "glued one", timestamp: 9 } })}${JSON.stringify({ type: "label", timestamp: "t10", targetId: null, label: "glued two" })}`;
  return `\ufeff${text[0]}\n\n${text.slice(1).join("\n")}\n   \n${glued}\n${JSON.stringify({ type: "message", timestamp: "t11", message: { role: "user", content: "after", timestamp: 11 } })}\n`;
}

function v2Session(): string {
  const lines = [
    { type: "session", version: 2, id: "sess-v2", timestamp: "2025-01-01T00:00:00.000Z", cwd: "/w" },
    { type: "message", id: "a1", parentId: null, timestamp: "t1", message: { role: "user", content: "hi", timestamp: 1 } },
    { type: "message", id: "a2", parentId: "a1", timestamp: "t2", message: { role: "hookMessage", customType: "x", content: "hook ".repeat(50), display: false, timestamp: 2 } },
  ];
  return `${lines.map((line) => JSON.stringify(line)).join("\n")}\n`;
}

describe("migrateScannedFile", () => {
  it.each([0, 2])("a version-1 file: the in-memory migration's bytes (%i workers, one shard per few lines)", async (workers) => {
    const content = v1Session();
    const expected = await inMemoryBytes(content);
    expect(expected.toString("utf8")).toContain('"role":"custom"');
    expect(sha1(await streamedBytes(content, workers, 4096))).toBe(sha1(expected));
    expect(sha1(await streamedBytes(content, workers))).toBe(sha1(expected));
  });

  it("a version-2 file: the in-memory migration's bytes", async () => {
    const content = v2Session();
    expect(sha1(await streamedBytes(content, 1))).toBe(sha1(await inMemoryBytes(content)));
  });

  it.each(["before-compaction.jsonl", "compact.jsonl", "large-session.jsonl", "session.jsonl"])("real session %s: the in-memory migration's bytes", async (name) => {
    const content = fs.readFileSync(path.join(REAL_SESSIONS_DIR, name));
    expect(sha1(await streamedBytes(content, 2, 64 * 1024))).toBe(sha1(await inMemoryBytes(content)));
  });

  it("an incomplete last line is refused unless it may be dropped, like the in-memory migration", async () => {
    const content = `${v1Session()}{"type":"message","timest`;
    const file = tempFile(content);
    const scanned = await scanSession(file, runner(0));
    await expect(migrateScannedFile(scanned)).rejects.toMatchObject({ code: "truncated-last-line" });
    expect(fs.readFileSync(file, "utf8")).toBe(content);
    await migrateScannedFile(scanned, { dropTruncatedTail: true });
    expect(sha1(fs.readFileSync(file))).toBe(sha1(await inMemoryBytes(content)));
  });

  it("a file rewritten between the scan and the migration is left as it is, with no temporary copy", async () => {
    const content = v1Session();
    const file = tempFile(content);
    const scanned = await scanSession(file, runner(0));
    // Same size, other bytes: only reading the lines again can tell.
    const altered = content.replace('"content":"after"', '"content":"AFTER"').replace('{"type":"compaction"', '{"type":"compactiom"');
    expect(altered.length).toBe(content.length);
    fs.writeFileSync(file, altered);
    const error = await migrateScannedFile(scanned).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SessionFileError);
    expect(error).toMatchObject({ code: "io", message: expect.stringContaining("file changed while it was being migrated") });
    expect(fs.readFileSync(file, "utf8")).toBe(altered);
    expect(fs.readdirSync(path.dirname(file))).toEqual([path.basename(file)]);
  });

  it("leaves a version-3 file alone", async () => {
    const content = v2Session();
    const file = tempFile(content);
    await migrateScannedFile(await scanSession(file, runner(0)));
    const migrated = fs.readFileSync(file);
    await migrateScannedFile(await scanSession(file, runner(0)));
    expect(fs.readFileSync(file)).toEqual(migrated);
  });
});
