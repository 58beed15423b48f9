// readSession on the real pi sessions and on broken files: what loads, what is refused, and
// that reading never changes the file.
import { parses, splitConcatenated } from "./helpers/joined-lines.js";
import { createHash } from "node:crypto";
import { copyFileSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildSessionContext, migrateSessionEntries, SessionManager } from "@mariozechner/pi-coding-agent";
import { afterEach, describe, expect, it } from "vitest";
import { removeTempDirs, tempDir } from "./helpers/temp-dirs.js";
import type { SessionEntry } from "../src/core/session-types.js";
import { branchMessages, buildBranch, contextMessages } from "../src/core/session-tree.js";
import { readSession } from "../src/io/read-session.js";
import { SessionFileError } from "../src/io/session-errors.js";
import { REAL_SESSIONS_DIR } from "./helpers/fixture-paths.js";

const FIXTURES = REAL_SESSIONS_DIR;
const REAL = ["before-compaction.jsonl", "compact.jsonl", "large-session.jsonl", "session.jsonl"];
/** The line of each real session that holds two entries written without a newline between them. */
const JOINED_LINE: Record<string, number | undefined> = { "session.jsonl": 440, "compact.jsonl": 1013 };

afterEach(removeTempDirs);


function copyFixture(name: string): string {
  const file = join(tempDir("chainpress-read-"), name);
  copyFileSync(join(FIXTURES, name), file);
  return file;
}

function writeTemp(name: string, content: string | Buffer): string {
  const file = join(tempDir("chainpress-read-"), name);
  writeFileSync(file, content);
  return file;
}

function sha1(file: string): string {
  return createHash("sha1").update(readFileSync(file)).digest("hex");
}

/**
 * Parses the file the plain way (split on "\n", JSON.parse). A line that does not parse but is
 * whole objects back to back contributes them all (`joined`); any other is counted `malformed`.
 */
function independentRead(file: string) {
  const lines = readFileSync(file, "utf8").split("\n");
  const parsed: Array<Record<string, any>> = [];
  const joined: Array<{ line: number; pieces: number }> = [];
  let nonBlank = 0;
  let malformed = 0;
  lines.forEach((text, i) => {
    if (text.trim() === "") return;
    nonBlank += 1;
    if (parses(text)) {
      parsed.push(JSON.parse(text));
      return;
    }
    const pieces = splitConcatenated(text);
    if (pieces === undefined) {
      malformed += 1;
      return;
    }
    joined.push({ line: i + 1, pieces: pieces.length });
    parsed.push(...pieces.map((piece) => JSON.parse(piece)));
  });
  return { nonBlank, parsed, joined, malformed };
}

type Linked = { id?: unknown; parentId?: unknown; firstKeptEntryId?: unknown };

/**
 * Asserts that `ours` and `theirs` are the same entries in the same order, keys and key order
 * included, up to a renaming of ids (v1 entries get their ids on load: ours are deterministic,
 * pi's random). `aliases` maps ids of ours that have no counterpart in `theirs` to the id of
 * ours whose counterpart stands in for them.
 */
function expectSameUpToIds(ours: readonly object[], theirs: readonly object[], aliases = new Map<string, string>()): void {
  expect(ours.length).toBe(theirs.length);
  const rename = new Map<unknown, unknown>();
  ours.forEach((entry, i) => rename.set((entry as Linked).id, (theirs[i] as Linked).id));
  const renamed = ours.map((entry) => {
    const copy: Record<string, unknown> = { ...entry };
    for (const key of ["id", "parentId", "firstKeptEntryId"]) {
      const id = copy[key];
      if (typeof id === "string") copy[key] = rename.get(aliases.get(id) ?? id) ?? `unmatched ${id}`;
    }
    return JSON.stringify(copy);
  });
  expect(renamed).toEqual(theirs.map((entry) => JSON.stringify(entry)));
}

async function expectSessionError(file: string, code: string, line?: number): Promise<SessionFileError> {
  const error = await readSession(file).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SessionFileError);
  const sessionError = error as SessionFileError;
  expect(sessionError.code).toBe(code);
  expect(sessionError.file).toBe(file);
  expect(sessionError.line).toBe(line);
  expect(sessionError.message.startsWith(line === undefined ? `${file}: ` : `${file}:${line}: `)).toBe(true);
  return sessionError;
}

const header = (extra = "") => `{"type":"session","version":3,"id":"s-1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"${extra}}`;
const userLine = (id: string, parentId: string | null, text: string) =>
  JSON.stringify({
    type: "message",
    id,
    parentId,
    timestamp: "2026-01-01T00:00:01.000Z",
    message: { role: "user", content: [{ type: "text", text }], timestamp: 1767225601000 },
  });

describe("real v1 sessions", () => {
  it.each(REAL)("%s loads every entry (a joined line's included) as pi migrates them", async (name) => {
    const file = copyFixture(name);
    const before = sha1(file);
    const plain = independentRead(file);
    const loaded = await readSession(file, { malformedLines: "skip" });
    const joinedLine = JOINED_LINE[name];

    expect(plain.malformed).toBe(0);
    expect(plain.joined).toEqual(joinedLine === undefined ? [] : [{ line: joinedLine, pieces: 2 }]);
    expect(loaded.header.id).toBe(plain.parsed[0]!.id);
    expect(loaded.originalVersion).toBe(1);
    expect(loaded.header.version).toBe(3);
    // Every non-blank line is the header or an entry; a joined line is as many entries as pieces.
    const extra = plain.joined.reduce((n, j) => n + j.pieces - 1, 0);
    expect(loaded.entries.length).toBe(plain.nonBlank - 1 + extra);
    expect(loaded.skippedLines).toEqual([]);
    expect(loaded.warnings.map((w) => [w.code, w.line])).toEqual(plain.joined.map((j) => ["joined-entries", j.line]));
    expect(loaded.byteLength).toBe(statSync(file).size);
    expect(loaded.truncatedTail).toBeNull();
    expect(loaded.missingFinalNewline).toBe(false);
    for (const { line, pieces } of plain.joined) {
      expect(loaded.entries.filter((e) => loaded.lineOf(e) === line)).toHaveLength(pieces);
    }

    let previous: string | null = null;
    for (const entry of loaded.entries) {
      expect(entry.id).toMatch(/^[0-9a-f]{8}$/);
      expect(entry.parentId).toBe(previous);
      previous = entry.id;
    }
    expect(new Set(loaded.entries.map((e) => e.id)).size).toBe(loaded.entries.length);

    // Entry for entry, what pi's own migration makes of the file with the lost newline put back.
    migrateSessionEntries(plain.parsed as never);
    expect(JSON.stringify(loaded.header)).toBe(JSON.stringify(plain.parsed[0]));
    expectSameUpToIds(loaded.entries, plain.parsed.slice(1));

    // v1 is linear: the branch is every entry, in order.
    const branch = buildBranch(loaded.entries);
    expect(branch).toEqual(loaded.entries);
    expect(branch.every((entry, i) => entry === loaded.entries[i])).toBe(true);

    const plainMessages = plain.parsed.filter((e) => e.type === "message");
    const plainToolResults = plainMessages.filter((e) => e.message.role === "toolResult");
    const messages = branchMessages(branch);
    expect(messages.length).toBe(plainMessages.length);
    expect(messages.filter((m) => m.role === "toolResult").length).toBe(plainToolResults.length);
    expect(plainToolResults.length).toBeGreaterThan(100);

    const piContext = buildSessionContext(loaded.entries as never).messages;
    expect(contextMessages(branch)).toEqual(piContext);
    expect(sha1(file)).toBe(before);
  });

  it.each(REAL)("%s: pi's own load is ours less the joined line's entries, with the same context", async (name) => {
    const ours = await readSession(copyFixture(name), { malformedLines: "skip" });
    // pi rewrites a v1 file when it opens it, so it gets its own copy.
    const piFile = copyFixture(name);
    const pi = SessionManager.open(piFile, tempDir("chainpress-read-"));
    const piEntries = pi.getEntries();
    const joinedLine = JOINED_LINE[name];
    const joined = ours.entries.filter((e) => joinedLine !== undefined && ours.lineOf(e) === joinedLine);
    expect(joined).toHaveLength(joinedLine === undefined ? 0 : 2);
    expect(ours.warnings.map((w) => [w.code, w.line])).toEqual(joinedLine === undefined ? [] : [["joined-entries", joinedLine]]);
    // pi drops the joined line and loses its entries; we keep them.
    expect(ours.entries.length).toBe(piEntries.length + joined.length);

    const kept = ours.entries.filter((e) => !joined.includes(e));
    // pi chains the entry after the lost line to the one before it.
    const aliases = new Map<string, string>();
    if (joined.length > 0) {
      const first = ours.entries.indexOf(joined[0]!);
      expect(ours.entries.slice(first, first + joined.length)).toEqual(joined);
      const before = ours.entries[first - 1]!;
      for (const entry of joined) aliases.set(entry.id, before.id);
    }
    expectSameUpToIds(kept, piEntries, aliases);

    const relinked = kept.map((e) => (e.parentId !== null && aliases.has(e.parentId) ? { ...e, parentId: aliases.get(e.parentId)! } : e)) as SessionEntry[];
    const piContext = pi.buildSessionContext().messages;
    expect(contextMessages(buildBranch(relinked))).toEqual(piContext);
    expect(contextMessages(buildBranch(piEntries as never))).toEqual(piContext);
  });

  it("reads the same ids twice (deterministic migration)", async () => {
    const file = copyFixture("large-session.jsonl");
    const a = await readSession(file);
    const b = await readSession(file);
    expect(a.entries.map((e) => e.id)).toEqual(b.entries.map((e) => e.id));
  });

  it("maps entries to their 1-based line numbers", async () => {
    const loaded = await readSession(copyFixture("large-session.jsonl"));
    expect(loaded.lineOf(loaded.entries[0]!)).toBe(2);
    expect(loaded.lineOf(loaded.entries[99]!)).toBe(101);
    expect(loaded.lineOf({ ...loaded.entries[0]! })).toBeUndefined();
  });

  it.each([
    ["session.jsonl", 440, ["message", "message"]],
    ["compact.jsonl", 1013, ["message", "compaction"]],
  ])("%s has two entries glued on line %i: strict mode keeps both and names the line", async (name, line, types) => {
    const file = copyFixture(name);
    const before = sha1(file);
    const loaded = await readSession(file);
    expect(loaded.warnings).toHaveLength(1);
    expect(loaded.warnings[0]).toMatchObject({ code: "joined-entries", file, line });
    expect(loaded.warnings[0]!.message.startsWith(`${file}:${line}: `)).toBe(true);
    expect(loaded.skippedLines).toEqual([]);

    const onLine = loaded.entries.filter((e) => loaded.lineOf(e) === line);
    expect(onLine.map((e) => e.type)).toEqual(types);
    const first = loaded.entries.indexOf(onLine[0]!);
    expect(loaded.entries[first + 1]).toBe(onLine[1]);
    expect(loaded.lineOf(loaded.entries[first - 1]!)).toBe(line - 1);
    expect(onLine[0]!.parentId).toBe(loaded.entries[first - 1]!.id);
    expect(onLine[1]!.parentId).toBe(onLine[0]!.id);
    expect(sha1(file)).toBe(before);
  });
});

describe("line splitting", () => {
  it("gives the same result whatever the chunk size", async () => {
    const file = copyFixture("session.jsonl");
    const big = await readSession(file, { malformedLines: "skip" });
    // 1000-byte chunks: most lines span two or more chunks.
    const small = await readSession(file, { malformedLines: "skip", chunkBytes: 1000 });
    expect(small.entries).toEqual(big.entries);
    expect(small.entries.map((e) => small.lineOf(e))).toEqual(big.entries.map((e) => big.lineOf(e)));
    expect(small.byteLength).toBe(big.byteLength);
    expect(small.skippedLines).toEqual(big.skippedLines);
    expect(small.warnings).toEqual(big.warnings);
    expect(big.warnings.map((w) => [w.code, w.line])).toEqual([["joined-entries", 440]]);
  });

  it("splits correctly with 1-byte and 3-byte chunks (multi-byte characters cut across chunks)", async () => {
    const file = writeTemp("s.jsonl", `${header()}\n\n${userLine("a1", null, "héllo ✓ 😀")}\n${userLine("b2", "a1", "")}`);
    const reference = await readSession(file);
    for (const chunkBytes of [1, 3]) {
      const loaded = await readSession(file, { chunkBytes });
      expect(loaded.entries).toEqual(reference.entries);
      expect(loaded.entries.map((e) => loaded.lineOf(e))).toEqual([3, 4]);
      expect(loaded.missingFinalNewline).toBe(true);
    }
  });

  it("splits only on \\n: U+2028, U+2029 and \\r stay inside lines", async () => {
    const text = "a\u2028b\u2029c\rd";
    const file = writeTemp("s.jsonl", `${header()}\r\n${userLine("a1", null, text)}\r\n`);
    const loaded = await readSession(file);
    expect(loaded.entries).toHaveLength(1);
    expect(branchMessages(loaded.entries)[0]).toMatchObject({ content: [{ text }] });
  });

  it("skips blank lines but keeps counting them", async () => {
    const file = writeTemp("s.jsonl", `${header()}\n\n   \n${userLine("a1", null, "x")}\n\n${userLine("b2", "a1", "y")}\n`);
    const loaded = await readSession(file);
    expect(loaded.entries.map((e) => loaded.lineOf(e))).toEqual([4, 6]);
  });

  it("accepts a byte-order mark before the header, as pi does", async () => {
    const file = writeTemp("s.jsonl", `\uFEFF${header()}\n${userLine("a1", null, "x")}\n`);
    expect((await readSession(file)).header.id).toBe("s-1");
  });
});

describe("bad input", () => {
  it("malformed middle line: error names file and line 3", async () => {
    const file = writeTemp("s.jsonl", `${header()}\n${userLine("a1", null, "x")}\n{"type":"message",\n${userLine("b2", "a1", "y")}\n`);
    const before = sha1(file);
    await expectSessionError(file, "malformed-line", 3);
    expect(sha1(file)).toBe(before);
  });

  it("malformed middle line in skip mode: left out with a warning", async () => {
    const file = writeTemp("s.jsonl", `${header()}\n${userLine("a1", null, "x")}\n[1,2]\n${userLine("b2", "a1", "y")}\n`);
    const loaded = await readSession(file, { malformedLines: "skip" });
    expect(loaded.entries.map((e) => e.id)).toEqual(["a1", "b2"]);
    expect(loaded.skippedLines).toEqual([3]);
    expect(loaded.warnings.map((w) => [w.code, w.line])).toEqual([["malformed-line", 3]]);
  });

  it("an entry without an id in skip mode: left out, and the entries after it keep their own lines and locations", async () => {
    const file = writeTemp("s.jsonl", `${header()}\n${userLine("a1", null, "x")}\n{"type":"message","id":5,"parentId":"a1"}\n${userLine("b2", "a1", "y")}\n${userLine("c3", "b2", "z")}\n`);
    const loaded = await readSession(file, { malformedLines: "skip" });
    expect(loaded.entries.map((e) => e.id)).toEqual(["a1", "b2", "c3"]);
    expect(loaded.skippedLines).toEqual([3]);
    expect(loaded.entries.map((e) => loaded.lineOf(e))).toEqual([2, 4, 5]);
    const text = readFileSync(file, "utf8");
    for (const [k, entry] of loaded.entries.entries()) {
      const place = loaded.locationsByIndex?.location(k) ?? loaded.locationOf(entry)!;
      expect(JSON.parse(text.slice(place.byteOffset, place.byteOffset + place.bytes)).id).toBe(entry.id);
    }
    expect(loaded.entryIds.last).toBe("c3");
  });

  it("entries written back to back on one line: left out as pi leaves them, the warning names the line and --repair", async () => {
    // Texts that look like a boundary are escaped inside JSON strings, so they do not split.
    const glued = `${userLine("b2", "a1", 'y}{"type":"z"}')}${userLine("c3", "b2", "}{")}${userLine("d4", "c3", "w")}`;
    const file = writeTemp("s.jsonl", `${header()}\n${userLine("a1", null, "x")}\n${glued}\n${userLine("e5", "a1", "v")}\n`);
    const before = sha1(file);
    for (const opts of [{}, { chunkBytes: 7 }, { malformedLines: "skip" as const }]) {
      const loaded = await readSession(file, opts);
      expect(loaded.entries.map((e) => [e.id, loaded.lineOf(e)])).toEqual([
        ["a1", 2],
        ["e5", 4],
      ]);
      expect(loaded.joinedLines).toEqual([3]);
      expect(loaded.warnings.map((w) => [w.code, w.line])).toEqual([["joined-entries", 3]]);
      expect(loaded.warnings[0]!.message.startsWith(`${file}:3: `)).toBe(true);
      expect(loaded.warnings[0]!.message).toContain("--repair");
      expect(loaded.skippedLines).toEqual([]);
    }
    expect(sha1(file)).toBe(before);
  });

  it("a glued line in a version-1 file is kept whole: the migration writes each entry on its own line", async () => {
    const v1 = (text: string) => JSON.stringify({ type: "message", timestamp: "2026-01-01T00:00:01.000Z", message: { role: "user", content: [{ type: "text", text }], timestamp: 1 } });
    const file = writeTemp("s.jsonl", `{"type":"session","id":"s-1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}\n${v1("x")}\n${v1("y")}${v1("z")}\n`);
    const loaded = await readSession(file);
    expect(loaded.entries.map((e) => loaded.lineOf(e))).toEqual([2, 3, 3]);
    expect(loaded.joinedLines).toEqual([]);
    expect(loaded.warnings.map((w) => [w.code, w.line])).toEqual([["joined-entries", 3]]);
  });

  it.each([
    ["the second piece is cut off", `${userLine("b2", "a1", "y")}{"type":"message","id":"c3",`],
    ["the first piece does not parse", `{"type":"message","id":"b2",}${userLine("c3", "a1", "y")}`],
    ["garbage after the last piece", `${userLine("b2", "a1", "y")}${userLine("c3", "b2", "z")}}`],
    ["garbage between the pieces", `${userLine("b2", "a1", "y")}]${userLine("c3", "b2", "z")}`],
  ])("a line of glued pieces that do not all parse is malformed: %s", async (_, bad) => {
    const file = writeTemp("s.jsonl", `${header()}\n${userLine("a1", null, "x")}\n${bad}\n${userLine("d4", "a1", "z")}\n`);
    const before = sha1(file);
    const error = await expectSessionError(file, "malformed-line", 3);
    expect(error.message).toContain("invalid JSON");
    // Skip mode drops the whole line, as pi does: no piece of it is kept.
    const loaded = await readSession(file, { malformedLines: "skip" });
    expect(loaded.entries.map((e) => e.id)).toEqual(["a1", "d4"]);
    expect(loaded.skippedLines).toEqual([3]);
    expect(loaded.warnings.map((w) => [w.code, w.line])).toEqual([["malformed-line", 3]]);
    expect(sha1(file)).toBe(before);
  });

  it.each([
    ["a piece is not an entry", `{"id":"b2"}${userLine("c3", "a1", "y")}`],
    ["a piece lacks an id", `{"type":"message","parentId":"a1"}${userLine("c3", "a1", "y")}`],
  ])("a line of glued pieces that are not all entries is malformed: %s", async (_, bad) => {
    const file = writeTemp("s.jsonl", `${header()}\n${userLine("a1", null, "x")}\n${bad}\n`);
    await expectSessionError(file, "malformed-line", 3);
  });

  it("truncated last line: reported, not an error", async () => {
    const full = `${header()}\n${userLine("a1", null, "x")}\n`;
    const partial = `{"type":"message","id":"b2","par`;
    const file = writeTemp("s.jsonl", full + partial);
    const before = sha1(file);
    const loaded = await readSession(file);
    expect(loaded.entries.map((e) => e.id)).toEqual(["a1"]);
    expect(loaded.truncatedTail).toEqual({ line: 3, byteOffset: Buffer.byteLength(full), bytes: partial.length });
    expect(loaded.warnings).toHaveLength(1);
    expect(loaded.warnings[0]).toMatchObject({ code: "truncated-last-line", line: 3, file });
    expect(loaded.missingFinalNewline).toBe(false);
    expect(sha1(file)).toBe(before);
  });

  it("truncated last line cut inside a multi-byte character is a truncated tail, not invalid UTF-8", async () => {
    const partial = Buffer.from(`{"type":"message","text":"é`).subarray(0, -1);
    const file = writeTemp("s.jsonl", Buffer.concat([Buffer.from(`${header()}\n${userLine("a1", null, "x")}\n`), partial]));
    const loaded = await readSession(file);
    expect(loaded.truncatedTail?.line).toBe(3);
    expect(loaded.entries).toHaveLength(1);
  });

  it("last line without newline that parses is kept and flagged", async () => {
    const file = writeTemp("s.jsonl", `${header()}\n${userLine("a1", null, "x")}`);
    const loaded = await readSession(file);
    expect(loaded.entries.map((e) => e.id)).toEqual(["a1"]);
    expect(loaded.missingFinalNewline).toBe(true);
    expect(loaded.truncatedTail).toBeNull();
  });

  it("a skipped malformed last line without newline still counts as a missing newline", async () => {
    const file = writeTemp("s.jsonl", `${header()}\n${userLine("a1", null, "x")}\n[1]`);
    const loaded = await readSession(file, { malformedLines: "skip" });
    expect(loaded.skippedLines).toEqual([3]);
    expect(loaded.truncatedTail).toBeNull();
    expect(loaded.missingFinalNewline).toBe(true);
  });

  it("empty file", async () => {
    const file = writeTemp("s.jsonl", "");
    await expectSessionError(file, "empty");
    expect(readFileSync(file).length).toBe(0);
  });

  it("file of blank lines counts as empty", async () => {
    await expectSessionError(writeTemp("s.jsonl", "\n  \n\n"), "empty");
  });

  it("missing file", async () => {
    await expectSessionError(join(tempDir("chainpress-read-"), "nope.jsonl"), "not-found");
  });

  it("a package.json is not a session", async () => {
    const file = writeTemp("package.json", readFileSync(new URL("../package.json", import.meta.url)));
    const before = sha1(file);
    await expectSessionError(file, "not-a-session", 1);
    expect(sha1(file)).toBe(before);
  });

  it("a JSON line without a session header is not a session", async () => {
    await expectSessionError(writeTemp("s.jsonl", `${userLine("a1", null, "x")}\n`), "not-a-session", 1);
  });

  it("invalid UTF-8 bytes: error names the line", async () => {
    const bad = Buffer.concat([Buffer.from('{"type":"message","id":"b2","parentId":"a1","x":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}\n')]);
    const file = writeTemp("s.jsonl", Buffer.concat([Buffer.from(`${header()}\n${userLine("a1", null, "x")}\n`), bad]));
    const before = sha1(file);
    await expectSessionError(file, "invalid-utf8", 3);
    expect(sha1(file)).toBe(before);
  });

  it("a v3 entry without an id is malformed", async () => {
    await expectSessionError(writeTemp("s.jsonl", `${header()}\n{"type":"message","parentId":null}\n`), "malformed-line", 2);
  });

  it("duplicate ids warn; both entries are kept", async () => {
    const file = writeTemp("s.jsonl", `${header()}\n${userLine("a1", null, "x")}\n${userLine("a1", null, "y")}\n`);
    const loaded = await readSession(file);
    expect(loaded.entries).toHaveLength(2);
    expect(loaded.warnings.map((w) => [w.code, w.line])).toEqual([["duplicate-id", 3]]);
  });

  it("a line over maxLineBytes is refused clearly", async () => {
    const file = writeTemp("s.jsonl", `${header()}\n${userLine("a1", null, "x".repeat(5000))}\n`);
    const error = await readSession(file, { maxLineBytes: 1000, chunkBytes: 256 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SessionFileError);
    expect(error).toMatchObject({ code: "line-too-long", line: 2 });
  });

  it("a 100 MB single-line message loads", async () => {
    const size = 100 * 1024 * 1024;
    // Built from buffers: JSON.stringify of a 100 MB string alone takes over a second.
    const [open, close] = userLine("a1", null, "@").split("@") as [string, string];
    const content = Buffer.concat([Buffer.from(`${header()}\n${open}`), Buffer.alloc(size, "x"), Buffer.from(`${close}\n`)]);
    const file = writeTemp("big.jsonl", content);
    const before = createHash("sha1").update(content).digest("hex");
    const loaded = await readSession(file);
    expect(loaded.entries).toHaveLength(1);
    const message = branchMessages(loaded.entries)[0] as { content: Array<{ text: string }> };
    expect(message.content[0]!.text.length).toBe(size);
    expect(loaded.byteLength).toBe(content.length);
    expect(sha1(file)).toBe(before);
  });
});

describe("version 2 files", () => {
  it("keeps ids and renames hookMessage to custom", async () => {
    const hook = { type: "message", id: "h1", parentId: null, timestamp: "2026-01-01T00:00:00.000Z", message: { role: "hookMessage", customType: "t", content: "c", display: true, timestamp: 1 } };
    const file = writeTemp("s.jsonl", `{"type":"session","version":2,"id":"s-2","timestamp":"t","cwd":"/p"}\n${JSON.stringify(hook)}\n`);
    const loaded = await readSession(file);
    expect(loaded.originalVersion).toBe(2);
    expect(loaded.header.version).toBe(3);
    expect(loaded.entries[0]).toMatchObject({ id: "h1", parentId: null, message: { role: "custom" } });
  });
});
