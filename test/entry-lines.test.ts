/**
 * The session file's message lines by entry id (io/entry-lines.ts), on real files: checked against
 * the full reader's locations, and on the shapes a line-by-head reader can get wrong (a line
 * longer than a read, a last line without a newline, ids it must not trust).
 */

import fs from "node:fs";
import path from "node:path";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { afterEach, describe, expect, it } from "vitest";
import { removeTempDirs, tempDir } from "./helpers/temp-dirs.js";
import { messageEntryId, readEntryLines } from "../src/io/entry-lines.js";
import { readSession } from "../src/io/read-session.js";
import { REPO_ROOT } from "./helpers/fixture-paths.js";
import { calls, SessionBuilder } from "./helpers/session-builder.js";

afterEach(removeTempDirs);


function writeTemp(content: string): string {
  const file = path.join(tempDir("chainpress-entry-lines-"), "s.jsonl");
  fs.writeFileSync(file, content);
  return file;
}

const noPause = async () => undefined;

/** Every message entry's place, as the full reader finds it. */
async function readerPlaces(file: string) {
  const loaded = await readSession(file);
  return loaded.entries.filter((entry) => entry.type === "message").map((entry) => {
    const { byteOffset, bytes, line } = loaded.locationOf(entry)!;
    return { id: entry.id, place: { byteOffset, bytes, line } };
  });
}

function message(id: string, text: string): string {
  return JSON.stringify({ type: "message", id, parentId: null, timestamp: "2026-01-01T00:00:00.000Z", message: { role: "user", content: text, timestamp: 1 } });
}

describe("readEntryLines", () => {
  it("finds every message entry of the bundled default session where the full reader does", async () => {
    const file = path.join(REPO_ROOT, "fixtures", "large-sessions", "default-session.jsonl");
    const lines = await readEntryLines(file, noPause);
    const expected = await readerPlaces(file);
    expect(expected.length).toBeGreaterThan(100);
    expect(lines.size).toBe(expected.length);
    for (const { id, place } of expected) expect(lines.locationOf(id), id).toEqual({ ...place, terminated: true });
  });

  it("finds every message entry pi's own SessionManager wrote", async () => {
    const dir = tempDir("chainpress-entry-lines-");
    const pi = SessionManager.create(dir, dir);
    for (let i = 0; i < 20; i++) {
      pi.appendMessage({ role: "user", content: `question ${i} ünïcode "quoted"`, timestamp: i } as never);
      pi.appendMessage({ role: "assistant", content: [{ type: "text", text: `answer ${i}` }], timestamp: i } as never);
    }
    const file = pi.getSessionFile()!;
    const lines = await readEntryLines(file, noPause);
    const expected = await readerPlaces(file);
    expect(expected).toHaveLength(40);
    for (const { id, place } of expected) expect(lines.locationOf(id), id).toEqual({ ...place, terminated: true });
  });

  it("finds lines longer than a read, and a last line without a newline", async () => {
    const s = new SessionBuilder();
    s.chain("big", calls("g", 2, 5 * 1024 * 1024));
    s.chain("small", calls("h", 2, 100));
    const file = s.writeTemp();
    const content = fs.readFileSync(file);
    fs.writeFileSync(file, content.subarray(0, content.length - 1)); // no newline after the last line
    const lines = await readEntryLines(file, noPause);
    const expected = await readerPlaces(file);
    expect(Math.max(...expected.map(({ place }) => place.bytes))).toBeGreaterThan(5 * 1024 * 1024);
    expect(lines.size).toBe(expected.length);
    for (const [k, { id, place }] of expected.entries()) expect(lines.locationOf(id), id).toEqual({ ...place, terminated: k < expected.length - 1 });
  });

  it("leaves out ids named by two lines, and lines not in pi's form", async () => {
    const file = writeTemp(
      [
        '{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}',
        message("aaaa0001", "one"),
        message("aaaa0002", "two"),
        message("aaaa0001", "one again"),
        '{"id":"aaaa0003","type":"message","message":{"role":"user","content":"keys in another order"}}',
        '{"type":"custom","id":"aaaa0004","customType":"x","data":{}}',
        "",
        message("aaaa0005", "after a blank line"),
        message("msg-one", "an id of another writer"),
        message("msg-two", "another"),
        message("msg-two", "the same again"),
      ].join("\n") + "\n",
    );
    const lines = await readEntryLines(file, noPause);
    expect(lines.locationOf("msg-one")).toMatchObject({ line: 9 });
    expect(lines.locationOf("msg-two")).toBeUndefined();
    expect(lines.locationOf("aaaa0001")).toBeUndefined();
    expect(lines.locationOf("aaaa0003")).toBeUndefined();
    expect(lines.locationOf("aaaa0004")).toBeUndefined();
    expect(lines.locationOf("aaaa0002")).toMatchObject({ line: 3 });
    expect(lines.locationOf("aaaa0005")).toMatchObject({ line: 8, bytes: Buffer.byteLength(message("aaaa0005", "after a blank line")) });
    expect(lines.size).toBe(3);
  });

  it("reads an id only when it is a plain string at the line's head: a pi id as its value, any other as its text", () => {
    const id = (line: string) => messageEntryId(Buffer.from(line), 0, Buffer.byteLength(line));
    expect(id('{"type":"message","id":"ab12cd34","parentId":null}')).toBe(0xab12cd34);
    expect(id('{"type":"message","id":"00000000","parentId":null}')).toBe(0);
    expect(id('{"type":"message","id":"AB12CD34","parentId":null}')).toBe("AB12CD34");
    expect(id('{"type":"message","id":"ab12cd345","parentId":null}')).toBe("ab12cd345");
    expect(id('{"type":"message","id":"msg-ü1","parentId":null}')).toBe("msg-ü1");
    expect(id('{"type":"message","id":"ab\\u0031","parentId":null}')).toBeUndefined();
    expect(id('{"type":"message","id":"","parentId":null}')).toBeUndefined();
    expect(id('{"type":"message","id":"ab12cd34')).toBeUndefined();
    expect(id(`{"type":"message","id":"${"x".repeat(65)}"}`)).toBeUndefined();
    expect(id(' {"type":"message","id":"ab12cd34"}')).toBeUndefined();
  });
});
