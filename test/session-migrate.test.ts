// v1/v2 → v3 migration: in memory (migrateEntries) and on disk (migrateFileInPlace), checked
// against pi's own migration and loader.
import { splitConcatenated } from "./helpers/joined-lines.js";
import { createHash } from "node:crypto";
import { appendFileSync, chmodSync, copyFileSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { migrateSessionEntries, parseSessionEntries, SessionManager } from "@mariozechner/pi-coding-agent";
import { afterEach, describe, expect, it } from "vitest";
import { removeTempDirs, tempDir } from "./helpers/temp-dirs.js";
import { deterministicIdFactory, migrateEntries, type RawEntry } from "../src/core/session-migrate.js";
import type { SessionHeader } from "../src/core/session-types.js";
import { buildBranch } from "../src/core/session-tree.js";
import { migrateFileInPlace } from "../src/io/migrate-file.js";
import { readSession } from "../src/io/read-session.js";
import { SessionFileError } from "../src/io/session-errors.js";
import { REAL_SESSIONS_DIR } from "./helpers/fixture-paths.js";

const FIXTURES = REAL_SESSIONS_DIR;
const REAL = ["before-compaction.jsonl", "compact.jsonl", "large-session.jsonl", "session.jsonl"];
/** The line of each real session that holds two entries written without a newline between them. */
const JOINED_LINE: Record<string, number | undefined> = { "session.jsonl": 440, "compact.jsonl": 1013 };

afterEach(removeTempDirs);


function copyFixture(name: string, dir = tempDir("chainpress-migrate-")): string {
  const file = join(dir, name);
  copyFileSync(join(FIXTURES, name), file);
  chmodSync(file, 0o644);
  return file;
}

function sha1(file: string): string {
  return createHash("sha1").update(readFileSync(file)).digest("hex");
}

/** Same line with id values blanked: equal strings mean same keys, same order, same values. */
function withoutIds(line: string): string {
  const value = JSON.parse(line) as Record<string, unknown>;
  for (const key of ["id", "parentId", "firstKeptEntryId"]) {
    if (typeof value[key] === "string") value[key] = "ID";
  }
  return JSON.stringify(value);
}

/** A small v1 session: header then entries without id/parentId. */
function v1Sample(): { header: SessionHeader; entries: RawEntry[] } {
  const header = { type: "session", id: "v1-session", timestamp: "2025-01-01T00:00:00.000Z", cwd: "/p" } as SessionHeader;
  const message = (text: string) => ({ type: "message", timestamp: "t", message: { role: "user", content: text, timestamp: 1 } });
  const entries: RawEntry[] = [
    message("a"),
    message("b"),
    { type: "compaction", timestamp: "t", summary: "s1", firstKeptEntryIndex: 2, tokensBefore: 10 },
    { type: "compaction", timestamp: "t", summary: "s2", firstKeptEntryIndex: 0, tokensBefore: 10 },
    { type: "compaction", timestamp: "t", summary: "s3", firstKeptEntryIndex: 99, tokensBefore: 10 },
    { type: "compaction", timestamp: "t", summary: "s4", firstKeptEntryIndex: 7, tokensBefore: 10 },
    message("c"),
    { type: "message", timestamp: "t", message: { role: "hookMessage", customType: "h", content: "x", timestamp: 1 } },
  ];
  return { header, entries };
}

describe("migrateEntries", () => {
  it("v1: ids chain, keys appended at the end, compaction index → id", () => {
    const { header, entries } = v1Sample();
    const ids = ["i1", "i2", "i3", "i4", "i5", "i6", "i7", "i8"];
    const seen: number[] = [];
    const changed = migrateEntries(header, entries, (lineIndex) => {
      seen.push(lineIndex);
      return ids[lineIndex - 1]!;
    });
    expect(changed).toBe(true);
    expect(seen).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(Object.keys(header)).toEqual(["type", "id", "timestamp", "cwd", "version"]);
    expect(header.version).toBe(3);
    expect(entries.map((e) => e.parentId)).toEqual([null, "i1", "i2", "i3", "i4", "i5", "i6", "i7"]);
    expect(Object.keys(entries[0]!)).toEqual(["type", "timestamp", "message", "id", "parentId"]);
    // index 2 = second entry (header is index 0).
    expect(Object.keys(entries[2]!)).toEqual(["type", "timestamp", "summary", "tokensBefore", "id", "parentId", "firstKeptEntryId"]);
    expect(entries[2]!.firstKeptEntryId).toBe("i2");
    // index 0 is the header, 99 does not exist, 7 has no id yet when pi reads it: no id, index dropped.
    for (const e of entries.slice(3, 6)) {
      expect(e).not.toHaveProperty("firstKeptEntryId");
      expect(e).not.toHaveProperty("firstKeptEntryIndex");
    }
    expect((entries[7]!.message as { role: string }).role).toBe("custom");
  });

  it("v1: same result as pi's migrateSessionEntries apart from id values", () => {
    const ours = v1Sample();
    migrateEntries(ours.header, ours.entries, deterministicIdFactory(ours.header.id));
    const theirs = v1Sample();
    const piEntries = [theirs.header, ...theirs.entries];
    migrateSessionEntries(piEntries as never);
    const lines = (list: unknown[]) => list.map((e) => withoutIds(JSON.stringify(e)));
    expect(lines([ours.header, ...ours.entries])).toEqual(lines(piEntries));
  });

  it("v2: ids untouched, hookMessage → custom, version 3", () => {
    const header = { type: "session", version: 2, id: "s", timestamp: "t", cwd: "/" } as SessionHeader;
    const entries: RawEntry[] = [
      { type: "message", id: "aa", parentId: null, timestamp: "t", message: { role: "hookMessage", content: "x" } },
      { type: "message", id: "bb", parentId: "aa", timestamp: "t", message: { role: "user", content: "y" } },
    ];
    expect(migrateEntries(header, entries, () => "never")).toBe(true);
    expect(header.version).toBe(3);
    expect(entries.map((e) => [e.id, e.parentId, (e.message as { role: string }).role])).toEqual([
      ["aa", null, "custom"],
      ["bb", "aa", "user"],
    ]);
  });

  it("v3: nothing changes", () => {
    const header = { type: "session", version: 3, id: "s", timestamp: "t", cwd: "/" } as SessionHeader;
    const entries: RawEntry[] = [{ type: "message", id: "aa", parentId: null, timestamp: "t", message: { role: "hookMessage" } }];
    const before = JSON.stringify([header, entries]);
    expect(migrateEntries(header, entries, () => "never")).toBe(false);
    expect(JSON.stringify([header, entries])).toBe(before);
  });
});

describe("deterministicIdFactory", () => {
  it("is deterministic and 8 lowercase hex", () => {
    const a = deterministicIdFactory("sess");
    const b = deterministicIdFactory("sess");
    const idsA = [1, 2, 3].map(a);
    expect([1, 2, 3].map(b)).toEqual(idsA);
    for (const id of idsA) expect(id).toMatch(/^[0-9a-f]{8}$/);
    // sha1("sess:1") starts with these 8 hex digits.
    expect(idsA[0]).toBe(createHash("sha1").update("sess:1").digest("hex").slice(0, 8));
    expect(deterministicIdFactory("other")(1)).not.toBe(idsA[0]);
  });

  it("re-hashes on collision", () => {
    const taken = createHash("sha1").update("sess:1").digest("hex").slice(0, 8);
    const id = deterministicIdFactory("sess", [taken])(1);
    expect(id).not.toBe(taken);
    expect(id).toBe(createHash("sha1").update("sess:1:1").digest("hex").slice(0, 8));
    // The same line index asked twice cannot give the same id twice.
    const f = deterministicIdFactory("sess");
    expect(f(5)).not.toBe(f(5));
  });

  it("gives 20000 distinct ids", () => {
    const f = deterministicIdFactory("many");
    const ids = new Set(Array.from({ length: 20000 }, (_, i) => f(i + 1)));
    expect(ids.size).toBe(20000);
  });
});

describe("migrateFileInPlace on real v1 sessions", () => {
  it.each(REAL)("%s: pi opens the result without rewriting it and sees our tree", async (name) => {
    const dir = tempDir("chainpress-migrate-");
    const file = copyFixture(name, dir);
    chmodSync(file, 0o640);
    // A joined line is no error and loses nothing, so neither skipping nor dropping is needed.
    const loaded = await readSession(file);
    expect(loaded.skippedLines).toEqual([]);
    const joinedLine = JOINED_LINE[name];
    const joined = loaded.entries.filter((e) => joinedLine !== undefined && loaded.lineOf(e) === joinedLine);
    expect(joined).toHaveLength(joinedLine === undefined ? 0 : 2);
    const migrated = await migrateFileInPlace(loaded);

    expect(statSync(file).mode & 0o7777).toBe(0o640);
    expect(readdirSync(dir)).toEqual([name]); // no temp file left behind
    expect(migrated.byteLength).toBe(statSync(file).size);
    // Every entry on its own line, the joined line's entries included.
    expect(migrated.entries.map((e) => migrated.lineOf(e))).toEqual(migrated.entries.map((_, i) => i + 2));

    const reread = await readSession(file);
    expect(reread.originalVersion).toBe(3);
    expect(reread.warnings).toEqual([]); // the joined line is repaired
    expect(reread.entries).toEqual(loaded.entries);
    expect(reread.entries.map((e) => reread.lineOf(e))).toEqual(reread.entries.map((_, i) => i + 2));
    const recoveredLines = joined.map((e) => loaded.entries.indexOf(e) + 2);
    if (joinedLine !== undefined) expect(recoveredLines).toEqual([joinedLine, joinedLine + 1]);

    const bytes = sha1(file);
    const pi = SessionManager.open(file, dir);
    expect(sha1(file)).toBe(bytes); // pi would rewrite a file older than v3
    // pi now sees the entries it would have lost on the original file.
    expect(pi.getEntries().length).toBe(loaded.entries.length);
    expect(pi.getEntries().map((e) => e.id)).toEqual(loaded.entries.map((e) => e.id));
    expect(pi.getBranch().map((e) => e.id)).toEqual(buildBranch(loaded.entries).map((e) => e.id));
  });

  it.each(REAL)("%s: every migrated line has pi's key order and values (ids aside)", async (name) => {
    const file = copyFixture(name);
    const original = readFileSync(file, "utf8");
    const loaded = await readSession(file);
    await migrateFileInPlace(loaded);
    const ourLines = readFileSync(file, "utf8").split("\n");
    expect(ourLines.pop()).toBe("");

    // Lines of the migrated file that hold the joined line's entries (pi loses them).
    const joinedLine = JOINED_LINE[name];
    const recovered = new Set(loaded.entries.flatMap((e, i) => (joinedLine !== undefined && loaded.lineOf(e) === joinedLine ? [i + 2] : [])));
    expect(recovered.size).toBe(joinedLine === undefined ? 0 : 2);

    // Every line pi's own migration has, we have, the same and in the same order.
    const piEntries = parseSessionEntries(original);
    migrateSessionEntries(piEntries);
    const shared = ourLines.filter((_, i) => !recovered.has(i + 1));
    expect(shared.map(withoutIds)).toEqual(piEntries.map((e) => withoutIds(JSON.stringify(e))));

    // With the lost newline put back, pi's migration gives every one of our lines.
    const repaired = original
      .split("\n")
      .map((line, i) => (i + 1 === joinedLine ? splitConcatenated(line)!.join("\n") : line))
      .join("\n");
    const piRepaired = parseSessionEntries(repaired);
    migrateSessionEntries(piRepaired);
    expect(piRepaired.length).toBe(piEntries.length + recovered.size);
    expect(ourLines.map(withoutIds)).toEqual(piRepaired.map((e) => withoutIds(JSON.stringify(e))));
  });

  it("leaves a v3 file alone", async () => {
    const file = copyFixture("large-session.jsonl");
    await migrateFileInPlace(await readSession(file));
    const bytes = sha1(file);
    const loaded = await readSession(file);
    expect(await migrateFileInPlace(loaded)).toBe(loaded);
    expect(sha1(file)).toBe(bytes);
  });

  it("refuses to drop a malformed line unless asked", async () => {
    const file = join(tempDir("chainpress-migrate-"), "session.jsonl");
    const lines = readFileSync(join(FIXTURES, "session.jsonl"), "utf8").split("\n");
    lines.splice(100, 0, '{"type":"message",'); // becomes line 101
    writeFileSync(file, lines.join("\n"));
    const bytes = sha1(file);
    const loaded = await readSession(file, { malformedLines: "skip" });
    expect(loaded.skippedLines).toEqual([101]);
    await expect(migrateFileInPlace(loaded)).rejects.toMatchObject({ code: "malformed-line", line: 101 });
    expect(sha1(file)).toBe(bytes);

    // Asked to: only that line goes; the joined line's entries (now line 441) stay.
    await migrateFileInPlace(loaded, { dropMalformedLines: true });
    const reread = await readSession(file);
    expect(reread.warnings).toEqual([]);
    expect(reread.entries).toEqual(loaded.entries);
    expect(loaded.entries.filter((e) => loaded.lineOf(e) === 441)).toHaveLength(2);
  });

  it("refuses when the file changed since it was read", async () => {
    const file = copyFixture("large-session.jsonl");
    const loaded = await readSession(file);
    appendFileSync(file, '{"type":"message"}\n');
    const bytes = sha1(file);
    const error = await migrateFileInPlace(loaded).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SessionFileError);
    expect(error).toMatchObject({ code: "io" });
    expect(sha1(file)).toBe(bytes);
  });

  it("refuses a truncated tail unless told to drop it", async () => {
    const dir = tempDir("chainpress-migrate-");
    const file = join(dir, "s.jsonl");
    writeFileSync(file, '{"type":"session","id":"s"}\n{"type":"message","timestamp":"t","message":{"role":"user","content":"x"}}\n{"type":"mess');
    const loaded = await readSession(file);
    await expect(migrateFileInPlace(loaded)).rejects.toMatchObject({ code: "truncated-last-line", line: 3 });
    await migrateFileInPlace(loaded, { dropTruncatedTail: true });
    const lines = readFileSync(file, "utf8").split("\n");
    expect(lines).toHaveLength(3);
    expect(JSON.parse(lines[0]!)).toEqual({ type: "session", id: "s", version: 3 });
    expect((await readSession(file)).truncatedTail).toBeNull();
  });
});
