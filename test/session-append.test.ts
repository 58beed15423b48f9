// SessionAppender: exact bytes appended, tree links, pi reading the result, and failures that
// must leave the file as it was.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { appendFileSync, copyFileSync, existsSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { afterEach, describe, expect, it } from "vitest";
import { removeTempDirs, tempDir } from "./helpers/temp-dirs.js";
import { buildBranch } from "../src/core/session-tree.js";
import { SessionAppender } from "../src/io/append-session.js";
import { migrateFileInPlace } from "../src/io/migrate-file.js";
import { readSession } from "../src/io/read-session.js";
import { SessionFileError } from "../src/io/session-errors.js";
import { REAL_SESSIONS_DIR } from "./helpers/fixture-paths.js";

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
const FIXTURES = REAL_SESSIONS_DIR;
const NOW = Date.UTC(2026, 0, 2, 3, 4, 5, 678);
const NOW_ISO = "2026-01-02T03:04:05.678Z";

afterEach(removeTempDirs);


function sha1(file: string): string {
  return createHash("sha1").update(readFileSync(file)).digest("hex");
}

/** ids handed out in order, so tests know every id in advance. */
function idSequence(...ids: string[]): () => string {
  let next = 0;
  return () => ids[next++ % ids.length]!;
}

const HEADER = '{"type":"session","version":3,"id":"s-append","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}';
const USER = '{"type":"message","id":"11111111","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":1767225601000}}';
const ASSISTANT =
  '{"type":"message","id":"22222222","parentId":"11111111","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"hello"}],"provider":"mock","model":"m","stopReason":"stop","timestamp":1767225602000}}';

function writeSession(content: string): string {
  const file = join(tempDir("chainpress-append-"), "s.jsonl");
  writeFileSync(file, content);
  return file;
}

describe("appendCustom", () => {
  it("writes the same bytes when the data comes pre-serialised (dataJson) and when it does not", async () => {
    const data = { toolCalls: [{ toolCallId: "a\u2028b", text: "é\n\"q\"", n: 1.5 }], backfilled: true, refs: [] };
    const lines = [];
    for (const dataJson of [undefined, JSON.stringify(data)]) {
      const file = writeSession(`${HEADER}\n${USER}\n${ASSISTANT}\n`);
      const appender = await SessionAppender.open(await readSession(file), { now: () => NOW, randomId: idSequence("aaaa0001") });
      await appender.appendCustom("context-prune-index", data, dataJson === undefined ? {} : { dataJson });
      await appender.close();
      lines.push(readFileSync(file, "utf8").split("\n").at(-2));
    }
    expect(lines[1]).toBe(lines[0]);
    expect(JSON.parse(lines[0]!).data).toEqual(data);
  });

  it("writes pi's custom entry line, chained to the leaf, and pi reads it", async () => {
    const original = `${HEADER}\n${USER}\n${ASSISTANT}\n`;
    const file = writeSession(original);
    const appender = await SessionAppender.open(await readSession(file), { now: () => NOW, randomId: idSequence("aaaa0001", "aaaa0002") });
    expect(appender.leafId).toBe("22222222");

    const first = await appender.appendCustom("context-prune-index", { chains: [1, 2], note: "é" });
    const second = await appender.appendCustom("context-prune-stats", { n: 3 });
    await appender.close();

    const expectedFirst = `{"type":"custom","customType":"context-prune-index","data":{"chains":[1,2],"note":"é"},"id":"aaaa0001","parentId":"22222222","timestamp":"${NOW_ISO}"}`;
    const expectedSecond = `{"type":"custom","customType":"context-prune-stats","data":{"n":3},"id":"aaaa0002","parentId":"aaaa0001","timestamp":"${NOW_ISO}"}`;
    expect(readFileSync(file, "utf8")).toBe(`${original}${expectedFirst}\n${expectedSecond}\n`);
    expect(JSON.stringify(first)).toBe(expectedFirst);
    expect(second.parentId).toBe(first.id);

    const bytes = sha1(file);
    const pi = SessionManager.open(file, dirname(file));
    expect(sha1(file)).toBe(bytes);
    expect(pi.getBranch().map((e) => e.id)).toEqual(["11111111", "22222222", "aaaa0001", "aaaa0002"]);
    expect(pi.getEntries().at(-1)).toEqual(second);

    const reread = await readSession(file);
    expect(reread.warnings).toEqual([]);
    expect(reread.entries.slice(-2)).toEqual([first, second]);
  });

  it("on a migrated real session: pi's branch ends with our entries", async () => {
    const dir = tempDir("chainpress-append-");
    const file = join(dir, "large-session.jsonl");
    copyFileSync(join(FIXTURES, "large-session.jsonl"), file);
    const migrated = await migrateFileInPlace(await readSession(file));
    const appender = await SessionAppender.open(migrated);
    const a = await appender.appendCustom("context-prune-chain", { chain: "x" });
    const b = await appender.appendCustom("context-prune-chain", { chain: "y" });
    await appender.close();
    expect(a.id).toMatch(/^[0-9a-f]{8}$/);
    expect(a.parentId).toBe(migrated.entries.at(-1)!.id);

    const pi = SessionManager.open(file, dir);
    const piBranch = pi.getBranch().map((e) => e.id);
    expect(piBranch.slice(-2)).toEqual([a.id, b.id]);
    expect(piBranch).toEqual(buildBranch((await readSession(file)).entries).map((e) => e.id));
  });

  it("adds the missing final newline first", async () => {
    const file = writeSession(`${HEADER}\n${USER}`);
    const loaded = await readSession(file);
    expect(loaded.missingFinalNewline).toBe(true);
    const appender = await SessionAppender.open(loaded, { now: () => NOW, randomId: () => "bbbbbbbb" });
    await appender.appendCustom("t", null);
    // randomId keeps returning the id now taken: refused rather than duplicated, nothing written.
    await expect(appender.appendCustom("t", 1)).rejects.toMatchObject({ code: "duplicate-id" });
    await appender.close();
    const text = readFileSync(file, "utf8");
    expect(text).toBe(`${HEADER}\n${USER}\n{"type":"custom","customType":"t","data":null,"id":"bbbbbbbb","parentId":"11111111","timestamp":"${NOW_ISO}"}\n`);
    expect((await readSession(file)).entries).toHaveLength(2);
  });

  it("header-only file without final newline: the first entry is a root on its own line", async () => {
    const file = writeSession(HEADER);
    const loaded = await readSession(file);
    expect(loaded.entries).toEqual([]);
    expect(loaded.missingFinalNewline).toBe(true);
    const appender = await SessionAppender.open(loaded, { now: () => NOW, randomId: () => "0a0a0a0a" });
    expect(appender.leafId).toBeNull();
    await appender.appendCustom("t", { x: 1 });
    await appender.close();
    expect(readFileSync(file, "utf8")).toBe(`${HEADER}\n{"type":"custom","customType":"t","data":{"x":1},"id":"0a0a0a0a","parentId":null,"timestamp":"${NOW_ISO}"}\n`);
    expect(SessionManager.open(file, dirname(file)).getBranch().map((e) => e.id)).toEqual(["0a0a0a0a"]);
  });

  it("never reuses a known id", async () => {
    const file = writeSession(`${HEADER}\n${USER}\n${ASSISTANT}\n`);
    const appender = await SessionAppender.open(await readSession(file), { randomId: idSequence("11111111", "22222222", "cccccccc") });
    expect((await appender.appendCustom("t", 1)).id).toBe("cccccccc");
    await appender.close();
  });

  it("concurrent calls are serialised into one chain", async () => {
    const file = writeSession(`${HEADER}\n${USER}\n`);
    const appender = await SessionAppender.open(await readSession(file));
    const entries = await Promise.all([1, 2, 3].map((n) => appender.appendCustom("t", n)));
    await appender.close();
    expect(entries.map((e) => e.parentId)).toEqual(["11111111", entries[0]!.id, entries[1]!.id]);
    const pi = SessionManager.open(file, dirname(file));
    expect(pi.getBranch().map((e) => e.id)).toEqual(["11111111", ...entries.map((e) => e.id)]);
  });

  it("appendRawLine writes the line as is and follows its id", async () => {
    const file = writeSession(`${HEADER}\n${USER}\n`);
    const appender = await SessionAppender.open(await readSession(file), { randomId: () => "dddddddd" });
    const raw = '{"type":"label","id":"eeeeeeee","parentId":"11111111","timestamp":"2026-01-01T00:00:03.000Z","targetId":"11111111","label":"x"}';
    await appender.appendRawLine(raw);
    expect(appender.leafId).toBe("eeeeeeee");
    await expect(appender.appendRawLine("a\nb")).rejects.toBeInstanceOf(SessionFileError);
    expect((await appender.appendCustom("t", 1)).parentId).toBe("eeeeeeee");
    await appender.close();
    expect(readFileSync(file, "utf8").split("\n")[2]).toBe(raw);
  });
});

describe("refusals and failures leave the file unchanged", () => {
  it("refuses a truncated tail unless told to drop it", async () => {
    const good = `${HEADER}\n${USER}\n`;
    const file = writeSession(`${good}{"type":"custom","id":"ff`);
    const loaded = await readSession(file);
    const bytes = sha1(file);
    await expect(SessionAppender.open(loaded)).rejects.toMatchObject({ code: "truncated-last-line", line: 3 });
    expect(sha1(file)).toBe(bytes);

    const appender = await SessionAppender.open(loaded, { dropTruncatedTail: true, now: () => NOW, randomId: () => "abcdef01" });
    await appender.appendCustom("t", 1);
    await appender.close();
    expect(readFileSync(file, "utf8")).toBe(`${good}{"type":"custom","customType":"t","data":1,"id":"abcdef01","parentId":"11111111","timestamp":"${NOW_ISO}"}\n`);
  });

  it("refuses a file that changed since it was read", async () => {
    const file = writeSession(`${HEADER}\n${USER}\n`);
    const loaded = await readSession(file);
    appendFileSync(file, `${ASSISTANT}\n`);
    const bytes = sha1(file);
    await expect(SessionAppender.open(loaded)).rejects.toMatchObject({ code: "io" });
    expect(sha1(file)).toBe(bytes);
  });

  it("notices a write by someone else between two appends", async () => {
    const file = writeSession(`${HEADER}\n${USER}\n`);
    const appender = await SessionAppender.open(await readSession(file));
    await appender.appendCustom("t", 1);
    appendFileSync(file, `${ASSISTANT}\n`);
    const bytes = sha1(file);
    await expect(appender.appendCustom("t", 2)).rejects.toMatchObject({ code: "io" });
    await appender.close();
    expect(sha1(file)).toBe(bytes);
  });

  it("refuses a v1 file that was not migrated (pi would re-id our entries)", async () => {
    const file = join(tempDir("chainpress-append-"), "session.jsonl");
    copyFileSync(join(FIXTURES, "large-session.jsonl"), file);
    const bytes = sha1(file);
    await expect(SessionAppender.open(await readSession(file))).rejects.toMatchObject({ code: "io" });
    expect(sha1(file)).toBe(bytes);
  });

  it("a session deleted after reading is not recreated", async () => {
    const file = writeSession(`${HEADER}\n${USER}\n`);
    const loaded = await readSession(file);
    unlinkSync(file);
    await expect(SessionAppender.open(loaded)).rejects.toMatchObject({ code: "not-found" });
    expect(existsSync(file)).toBe(false);
  });

  it("a closed appender refuses to write", async () => {
    const file = writeSession(`${HEADER}\n${USER}\n`);
    const bytes = sha1(file);
    const appender = await SessionAppender.open(await readSession(file));
    await appender.close();
    await expect(appender.appendCustom("t", 1)).rejects.toMatchObject({ code: "io" });
    expect(sha1(file)).toBe(bytes);
  });

  // A file-size limit (ulimit -f) makes write(2) stop part-way and then fail with EFBIG: the
  // real partial-write failure, without mocking fs. It needs bash and jiti (to run TypeScript),
  // which are always there (jiti comes with pi); missing, the test fails rather than skipping.
  it("a write that fails part-way is cut back: no half line is left", () => {
    const jitiCli = join(ROOT, "node_modules/jiti/lib/jiti-cli.mjs");
    expect(existsSync(jitiCli), `jiti is missing (${jitiCli}); it comes with the @mariozechner/pi-coding-agent devDependency: run npm install`).toBe(true);
    const probe = spawnSync("bash", ["-c", "ulimit -f 2"], { encoding: "utf8" });
    expect(probe.error, `cannot run bash, which this test needs for ulimit -f: ${probe.error?.message}`).toBeUndefined();
    expect(probe.status, `bash cannot set a file-size limit (ulimit -f 2): ${probe.stderr}`).toBe(0);

    const dir = tempDir("chainpress-append-");
    const file = join(dir, "s.jsonl");
    writeFileSync(file, `${HEADER}\n${USER}\n`);
    const bytes = sha1(file);
    const script = join(dir, "child.ts");
    writeFileSync(
      script,
      [
        `import { readSession } from ${JSON.stringify(join(ROOT, "src/io/read-session.ts"))};`,
        `import { SessionAppender } from ${JSON.stringify(join(ROOT, "src/io/append-session.ts"))};`,
        "const appender = await SessionAppender.open(await readSession(process.argv[2]));",
        "const report = await appender.appendCustom('big', 'x'.repeat(5000)).then(",
        "  () => ({ ok: true }),",
        "  (e) => ({ ok: false, name: e.name, code: e.code, cause: e.cause?.code, message: e.message }),",
        ");",
        "console.log(JSON.stringify(report));",
      ].join("\n"),
    );
    // bash counts ulimit -f in KiB: the file may grow to 2048 bytes, so the 5 kB line is cut.
    const child = spawnSync("bash", ["-c", 'ulimit -f 2 && exec "$0" "$1" "$2" "$3"', process.execPath, jitiCli, script, file], {
      encoding: "utf8",
      // jiti's disk cache would itself hit the size limit.
      env: { ...process.env, JITI_FS_CACHE: "false" },
    });
    expect(child.stderr).toBe("");
    const report = JSON.parse(child.stdout.trim().split("\n").at(-1)!);
    expect(report).toMatchObject({ ok: false, name: "SessionFileError", code: "io", cause: "EFBIG" });
    expect(report.message).toContain("file restored");
    expect(sha1(file)).toBe(bytes);
  });
});
