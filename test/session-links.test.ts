/**
 * Symbolic links around a session, with real links in real folders and the built CLI: a session
 * path whose last component is a link is refused by every command unless --follow-links, which
 * then uses the real path of the file it names for everything; a folder walk says which links it
 * left out; nothing chainpress makes beside a session is written, replaced or removed through a
 * link; and a link higher up (a sessions folder on another disk) is an ordinary path.
 */

import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SessionAppender } from "../src/io/append-session.js";
import { processStartOf } from "../src/io/live-session-lock.js";
import { migrateFileInPlace } from "../src/io/migrate-file.js";
import { readSession } from "../src/io/read-session.js";
import { ensureBuilt, originalOutputs, pruneEntries, removeTempDirs, runCli, sha256, tempDir, writeSmallSession, type CliResult } from "./helpers/cli-harness.js";

const SESSION_ID = "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee";
const BLOBS = `${SESSION_ID}-blobs`;
/** Outputs this long are spilled (the default threshold is 65,536 characters). */
const SPILLED = { outputChars: 70_000 };

beforeAll(() => ensureBuilt());
afterAll(() => removeTempDirs());

/** A real temp folder (its own path resolved, so paths compare with what realpath gives). */
function realTempDir(): string {
  return fs.realpathSync(tempDir("chainpress-links-"));
}

/** A session in `<root>/real/` and a link to it in `<root>/links/`. */
function linkedSession(options: Parameters<typeof writeSmallSession>[2] = SPILLED, transform?: Parameters<typeof writeSmallSession>[3]) {
  const root = realTempDir();
  const realDir = path.join(root, "real");
  const linkDir = path.join(root, "links");
  fs.mkdirSync(realDir);
  fs.mkdirSync(linkDir);
  const real = writeSmallSession(realDir, "s.jsonl", options, transform);
  const link = path.join(linkDir, "link.jsonl");
  fs.symlinkSync(path.relative(linkDir, real), link);
  return { root, realDir, linkDir, real, link };
}

/** Every path under `dir`, relative, sorted (links listed, not followed). */
function tree(dir: string): string[] {
  return (fs.readdirSync(dir, { recursive: true }) as string[]).sort();
}

function cli(args: string[]): CliResult {
  return runCli(args, { timeoutMs: 60_000 });
}

function expectLinkRefused(run: CliResult, link: string, real: string): void {
  expect(run.status).toBe(1);
  expect(run.stderr).toContain(`${link}: the session path is a symbolic link to ${real}; chainpress refuses it`);
  expect(run.stderr).toContain("--follow-links");
  expect(run.stderr).not.toMatch(/\n\s+at /);
}

/** The text of the one tool output at `ref`, as archived. */
function rawOutput(session: string, ref: string, extra: string[] = []): CliResult {
  return cli(["query", session, ref, "--raw", ...extra]);
}

describe("a session path that is a symbolic link, without --follow-links", () => {
  it("compact refuses it, with --force, --dry-run and --repair too, naming what it links to; nothing is written anywhere", () => {
    const { root, real, link } = linkedSession();
    const before = sha256(real);
    const treeBefore = tree(root);
    for (const extra of [[], ["--force"], ["--dry-run"], ["--repair", "--force"], ["--json"]]) {
      const run = cli(["compact", link, "--workers", "0", ...extra]);
      expectLinkRefused(run, link, real);
      expect(sha256(real)).toBe(before);
      expect(tree(root)).toEqual(treeBefore); // no spill folder, lock, .bak or temporary file
    }
  });

  it("render, stats and query (refs, --raw, --offset, --search) refuse it and print nothing", () => {
    const { real, link } = linkedSession();
    expect(cli(["compact", real, "--workers", "0"]).status).toBe(0);
    const runs = [
      ["render", link],
      ["render", link, "--text"],
      ["stats", link],
      ["stats", link, "--json"],
      ["query", link, "t1"],
      ["query", link, "t1", "--raw"],
      ["query", link, "t1", "--offset", "1"],
      ["query", link, "--search", "out"],
    ];
    for (const args of runs) {
      const run = cli(args);
      expectLinkRefused(run, link, real);
      expect(run.out).toBe("");
    }
  });

  it("a link to nothing is refused by what it names, not as a missing file", () => {
    const root = realTempDir();
    const link = path.join(root, "dangling.jsonl");
    const target = path.join(root, "gone.jsonl");
    fs.symlinkSync(target, link);
    expectLinkRefused(cli(["compact", link, "--workers", "0"]), link, target);
    expectLinkRefused(cli(["render", link]), link, target);
    expect(tree(root)).toEqual(["dangling.jsonl"]);
  });
});

describe("--follow-links", () => {
  it("compact resolves the link once: entries, spill folder, lock and .bak are the target's, beside the target", () => {
    // A damaged last line, so --repair writes its .bak: it must go beside the real file too.
    const { root, realDir, linkDir, real, link } = linkedSession(SPILLED, (lines) => `${lines.join("\n")}\n{"broken\n`);
    const run = cli(["compact", link, "--workers", "0", "--repair", "--follow-links", "--json"]);
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    const report = JSON.parse(run.out) as { sessions: Array<{ file: string; target: string; backup: string }> };
    expect(report.sessions[0]).toMatchObject({ file: link, target: real, backup: `${real}.bak` });
    expect(tree(linkDir)).toEqual(["link.jsonl"]);
    expect(fs.lstatSync(link).isSymbolicLink()).toBe(true);
    const spills = tree(path.join(realDir, BLOBS));
    expect(spills).toHaveLength(6);
    expect(tree(realDir)).toEqual([BLOBS, ...spills.map((name) => path.join(BLOBS, name)), "s.jsonl", "s.jsonl.bak"].sort());
    // The records name spill files in the real folder.
    const spillPaths = pruneEntries(real).flatMap((entry) => ((entry.data.toolCalls as Array<{ spillPath?: string }> | undefined) ?? []).flatMap((r) => (r.spillPath ? [r.spillPath] : [])));
    expect(spillPaths.map((spillPath) => path.dirname(spillPath))).toEqual(Array(6).fill(path.join(realDir, BLOBS)));
    expect(tree(root).filter((name) => name.includes(".chainpress"))).toEqual([]);
  });

  it("render, stats and query of a spilled output read the target and its spill folder", () => {
    const { real, link } = linkedSession();
    const outputs = originalOutputs(real);
    expect(cli(["compact", link, "--workers", "0", "--follow-links"]).status).toBe(0);
    const raw = rawOutput(link, "t1", ["--follow-links"]);
    expect(raw.status).toBe(0);
    expect(raw.out).toBe([...outputs.values()][0]);
    expect(raw.out.length).toBe(SPILLED.outputChars);
    for (const args of [["render", link], ["stats", link, "--json"], ["query", link, "t2"], ["query", link, "--search", "out 1 1", "--json"]]) {
      const followed = cli([...args, "--follow-links"]);
      const direct = cli(args.map((arg) => (arg === link ? real : arg)));
      expect(followed.status).toBe(0);
      expect(followed.stderr).toBe("");
      expect(followed.out).toBe(direct.out);
    }
  });

  it("a live marker beside the link or beside the file refuses compact", () => {
    const { real, link } = linkedSession();
    const before = sha256(real);
    const marker = { pid: process.pid, hostname: os.hostname(), processStart: processStartOf(process.pid), since: new Date().toISOString() };
    for (const beside of [link, real]) {
      const file = `${beside}.chainpress.live`;
      fs.writeFileSync(file, `${JSON.stringify(marker)}\n`);
      const run = cli(["compact", link, "--workers", "0", "--follow-links"]);
      expect(run.status).toBe(1);
      expect(run.stderr).toContain(`open in pi (pid ${process.pid})`);
      expect(sha256(real)).toBe(before);
      fs.rmSync(file);
    }
  });
});

describe("a folder walk that meets a *.jsonl link", () => {
  it("leaves it out with a note; with --follow-links compacts the file it names, once, by its real path", () => {
    const { root, realDir, linkDir, real, link } = linkedSession();
    const before = sha256(real);
    const skipped = cli(["compact", linkDir, "--workers", "0"]);
    expect(skipped.status).toBe(1); // the folder holds no session of its own
    expect(skipped.stderr).toContain(`chainpress: note: skipped ${link}: a symbolic link to ${real}; not followed (use --follow-links`);
    expect(sha256(real)).toBe(before);
    expect(tree(realDir)).toEqual(["s.jsonl"]);

    // Both folders: the link and its target are one session.
    const followed = cli(["compact", linkDir, realDir, "--workers", "0", "--follow-links", "--json"]);
    expect(followed.status).toBe(0);
    const report = JSON.parse(followed.out) as { sessions: Array<{ file: string; target: string }> };
    expect(report.sessions).toEqual([expect.objectContaining({ file: link, target: real })]);
    expect(tree(realDir)).toContain(BLOBS);
    expect(tree(linkDir)).toEqual(["link.jsonl"]);
    expect(tree(root).filter((name) => name.includes(".chainpress"))).toEqual([]);
  });
});

describe("what chainpress makes beside a session is never reached through a link", () => {
  it("the leftovers sweep does not enter a spill folder that is a link", () => {
    const root = realTempDir();
    const session = writeSmallSession(root, "s.jsonl");
    const elsewhere = path.join(root, "elsewhere");
    fs.mkdirSync(elsewhere);
    // A name the sweep would remove in a real spill folder: a spill temporary of a dead writer.
    const deadPid = spawnSync(process.execPath, ["-e", ""]).pid;
    const bait = path.join(elsewhere, `.tmp-${deadPid}-1-0123abcd-x.txt`);
    fs.writeFileSync(bait, "not chainpress's\n");
    fs.symlinkSync(elsewhere, path.join(root, BLOBS));
    cli(["compact", session, "--workers", "0"]);
    expect(fs.readFileSync(bait, "utf8")).toBe("not chainpress's\n");
  });

  it("a .bak that is a link is refused as a link, with or without --force; what it names is unchanged", () => {
    const root = realTempDir();
    const session = writeSmallSession(root, "s.jsonl", {}, (lines) => `${lines.join("\n")}\n{"broken\n`);
    const other = path.join(root, "other.txt");
    fs.writeFileSync(other, "keep me\n");
    fs.symlinkSync(other, `${session}.bak`);
    const before = sha256(session);
    for (const force of [[], ["--force"]]) {
      const run = cli(["compact", session, "--repair", "--workers", "0", ...force]);
      expect(run.status).toBe(1);
      expect(run.stderr).toContain(`${session}.bak: backup is a symbolic link, not a regular file`);
      expect(fs.readFileSync(other, "utf8")).toBe("keep me\n");
      expect(sha256(session)).toBe(before);
    }
  });

  it("the appender refuses a session path that became a link after it was read", async () => {
    const root = realTempDir();
    const session = writeSmallSession(root, "s.jsonl");
    const loaded = await readSession(session);
    const other = path.join(root, "other.jsonl");
    fs.renameSync(session, other);
    fs.symlinkSync(other, session);
    const before = sha256(other);
    await expect(SessionAppender.open(loaded)).rejects.toThrow(`${session}: is a symbolic link; chainpress never appends through one`);
    expect(sha256(other)).toBe(before);
  });

  it("a version-1 rewrite refuses a session path that became a link, and leaves no temporary file", async () => {
    const root = realTempDir();
    const session = path.join(root, "v1.jsonl");
    const header = { type: "session", id: "v1-session", timestamp: "2025-01-01T00:00:00.000Z", cwd: "/p" };
    const message = (text: string) => ({ type: "message", timestamp: "2025-01-01T00:00:01.000Z", message: { role: "user", content: text, timestamp: 1 } });
    fs.writeFileSync(session, [header, message("a"), message("b")].map((line) => `${JSON.stringify(line)}\n`).join(""));
    const loaded = await readSession(session);
    expect(loaded.originalVersion).toBe(1);
    const other = path.join(root, "other.jsonl");
    fs.renameSync(session, other);
    fs.symlinkSync(other, session);
    const before = sha256(other);
    await expect(migrateFileInPlace(loaded)).rejects.toThrow(`${session}: session is a symbolic link`);
    expect(sha256(other)).toBe(before);
    expect(fs.lstatSync(session).isSymbolicLink()).toBe(true);
    expect(tree(root)).toEqual(["other.jsonl", "v1.jsonl"]);
  });

  it("the session reader refuses a final link", async () => {
    const { real, link } = linkedSession({});
    await expect(readSession(link)).rejects.toThrow(`${link}: is a symbolic link, not a regular file`);
    expect((await readSession(real)).entries.length).toBeGreaterThan(0);
  });
});

describe("a link higher up is an ordinary path", () => {
  /** `<root>/home` is a link to `<root>/disk/home`, as a home folder moved to another disk; the session lies below it. */
  function sessionsBehindLinkedHome() {
    const root = realTempDir();
    const realSessions = path.join(root, "disk", "home", ".pi", "agent", "sessions", "--work-proj--");
    fs.mkdirSync(realSessions, { recursive: true });
    fs.symlinkSync(path.join(root, "disk", "home"), path.join(root, "home"));
    const viaLink = path.join(root, "home", ".pi", "agent", "sessions", "--work-proj--");
    const session = writeSmallSession(viaLink, "s.jsonl", SPILLED);
    return { root, realSessions, viaLink, session, sessionsFolder: path.join(root, "home", ".pi", "agent", "sessions") };
  }

  it("compact, render, query of a spilled output and stats work through a linked home; spill files land in the real folder", () => {
    const { realSessions, viaLink, session } = sessionsBehindLinkedHome();
    const outputs = [...originalOutputs(session).values()];
    const compacted = cli(["compact", session, "--workers", "0", "--json"]);
    expect(compacted.stderr).toBe("");
    expect(compacted.status).toBe(0);
    const spills = tree(path.join(realSessions, BLOBS));
    expect(spills).toHaveLength(6);
    expect(tree(realSessions)).toEqual([BLOBS, ...spills.map((name) => path.join(BLOBS, name)), "s.jsonl"].sort());
    expect(fs.lstatSync(path.join(viaLink, BLOBS)).isDirectory()).toBe(true);

    const raw = rawOutput(session, "t1");
    expect(raw.status).toBe(0);
    expect(raw.out).toBe(outputs[0]);
    const rendered = cli(["render", session]);
    expect(rendered.status).toBe(0);
    expect(rendered.out).toContain("t1");
    const stats = cli(["stats", session, "--json"]);
    expect(stats.status).toBe(0);
    expect(JSON.parse(stats.out).chains.compressed).toBe(3);
    // The same session by its real path reads the same.
    expect(rawOutput(path.join(realSessions, "s.jsonl"), "t1").out).toBe(outputs[0]);
  });

  it("a sessions folder named through the link is walked and compacted in place", () => {
    const { realSessions, sessionsFolder } = sessionsBehindLinkedHome();
    const run = cli(["compact", sessionsFolder, "--workers", "0", "--json"]);
    expect(run.status).toBe(0);
    expect(run.stderr).toBe("");
    expect(JSON.parse(run.out).sessions).toHaveLength(1);
    expect(tree(path.join(realSessions, BLOBS))).toHaveLength(6);
  });
});
