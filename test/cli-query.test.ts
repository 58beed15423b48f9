// `chainpress query` on a compacted copy of a real session: every archived record comes back
// byte-exact with --raw (spilled ones included, read independently from the original file),
// the formatted output is context_tree_query's, and missing or corrupt spill files fail loudly.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FIRST_PAGE } from "../src/core/output-pages.js";
import { queryArchive, queryPage } from "../src/extension/query-tool.js";
import { loadSessionModel } from "../src/main/session-model.js";
import { copyReal, ensureBuilt, originalOutputs, pruneEntries, REAL_SESSIONS, removeTempDirs, runCli, tempDir } from "./helpers/cli-harness.js";
import { SessionLines } from "./helpers/session-lines.js";

interface Archived {
  ref: string;
  key: string;
  spillPath?: string;
}

let file = "";
let archived: Archived[] = [];

beforeAll(() => {
  ensureBuilt();
  file = copyReal("large-session.jsonl", fs.mkdtempSync(path.join(process.env.TMPDIR ?? "/tmp", "chainpress-query-")));
  // A low threshold so a good share of the outputs goes to spill files.
  const run = runCli(["compact", file, "--spill-threshold", "2000", "--workers", "0", "--json"]);
  expect(run.status, run.stderr).toBe(0);
  for (const entry of pruneEntries(file).filter((e) => e.customType === "context-prune-index")) {
    const data = entry.data as { toolCalls: Array<{ toolCallId: string; resultTimestamp: number; spillPath?: string }>; refs: Array<{ shortId: string }> };
    data.toolCalls.forEach((record, i) => {
      const item: Archived = { ref: data.refs[i]!.shortId, key: `${record.toolCallId}@${record.resultTimestamp}` };
      if (record.spillPath) item.spillPath = record.spillPath;
      archived.push(item);
    });
  }
}, 180_000);

afterAll(() => {
  fs.rmSync(path.dirname(file), { recursive: true, force: true });
  removeTempDirs();
});

describe("query --raw", () => {
  it("returns every archived output byte-exact, spilled ones included", () => {
    const spilled = archived.filter((a) => a.spillPath);
    expect(archived.length).toBeGreaterThan(300);
    expect(spilled.length).toBeGreaterThan(10);
    for (const a of spilled) expect(fs.existsSync(a.spillPath!)).toBe(true);

    const originals = originalOutputs(path.join(REAL_SESSIONS, "large-session.jsonl"));
    const expected = archived.map((a) => {
      expect(originals.has(a.key), a.key).toBe(true);
      return Buffer.from(originals.get(a.key)!, "utf8");
    });
    const run = runCli(["query", file, "--raw", ...archived.map((a) => a.ref)]);
    expect(run.status, run.stderr).toBe(0);
    const want = Buffer.concat(expected.flatMap((bytes, i) => (i === 0 ? [bytes] : [Buffer.from([0]), bytes])));
    if (!run.stdout.equals(want)) {
      // Name the first record that differs rather than dumping megabytes.
      const got = run.stdout.toString("utf8").split("\0");
      const bad = archived.findIndex((_, i) => got[i] !== expected[i]!.toString("utf8"));
      expect.fail(`raw output differs at ${archived[bad]?.ref} (${archived[bad]?.key})`);
    }
  });

  it("returns one record's bytes alone, by ref or by id@ts", () => {
    const a = archived.find((x) => x.spillPath)!;
    const original = originalOutputs(path.join(REAL_SESSIONS, "large-session.jsonl")).get(a.key)!;
    for (const ref of [a.ref, a.key]) {
      const run = runCli(["query", file, ref, "--raw"]);
      expect(run.status, run.stderr).toBe(0);
      expect(run.stdout.equals(Buffer.from(original, "utf8"))).toBe(true);
    }
  });
});

describe("query output and failures", () => {
  it("prints context_tree_query's blocks", () => {
    const [first, second] = archived;
    const run = runCli(["query", file, first!.ref, second!.ref]);
    expect(run.status, run.stderr).toBe(0);
    expect(run.out.startsWith(`## toolRef: ${first!.ref}\nTool: `)).toBe(true);
    // A backfilled record has no batch turn (-1): query shows the user turn it belongs to instead.
    expect(run.out).toMatch(/\nTurn: \d+ \(user turn in the session; the archive records none\)\n\n/);
    expect(run.out).toContain(`\n\n---\n\n## toolRef: ${second!.ref}\n`);
  });

  it("exits 1 naming a ref that is not archived", () => {
    const run = runCli(["query", file, archived[0]!.ref, "t999999"]);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain("t999999: not found");
    expect(run.out).toContain("## toolRef: t999999\n(not found in index");
  });

  it("exits 1 on a corrupt or missing spill file and prints no raw bytes", () => {
    const [corrupt, missing] = archived.filter((a) => a.spillPath);
    const bytes = fs.readFileSync(corrupt!.spillPath!);
    bytes[0] = bytes[0]! ^ 0x01;
    fs.writeFileSync(corrupt!.spillPath!, bytes);
    fs.rmSync(missing!.spillPath!);
    const run = runCli(["query", file, "--raw", corrupt!.ref, missing!.ref, archived[0]!.ref]);
    expect(run.status).toBe(1);
    expect(run.stdout.length).toBe(0);
    expect(run.stderr).toMatch(new RegExp(`${corrupt!.ref}: corrupt output: .*digest`));
    expect(run.stderr).toContain(`${missing!.ref}: missing output: spill file not found`);
  });
});

describe("an output whose first line is longer than a page", () => {
  let session = "";
  beforeAll(() => {
    session = path.join(tempDir("chainpress-query-long-line-"), "s.jsonl");
    const s = new SessionLines();
    // One line of 80,000 characters (spilled), and a first line of 60,000 characters with two more (inline).
    s.chain("one", [`${"0123456789abcdef".repeat(5_000)}`, `${"é".repeat(30_000)}\nsecond\nthird`]);
    s.reply("one done");
    s.write(session);
    const run = runCli(["compact", session, "--workers", "0"]);
    expect(run.status, run.stderr).toBe(0);
  });

  it("plain query shows its first page, a piece of that line, exactly as --offset 1 does", () => {
    for (const [ref, next] of [["t1", "1:51201"], ["t2", "1:25601"]] as const) {
      const page = runCli(["query", session, ref, "--offset", "1"]);
      expect(page.status, page.stderr).toBe(0);
      expect(page.out).toContain(`(from character 1 of line 1; the page ends inside line 1); next page: context_tree_query {"toolCallIds":["${ref}"],"offset":"${next}"}]\n`);
      const plain = runCli(["query", session, ref]);
      expect(plain.status, plain.stderr).toBe(0);
      expect(plain.out).toMatch(new RegExp(`^## toolRef: ${ref}\\nTool: bash\\n`));
      expect(plain.out.endsWith(`\n\n${page.out}`)).toBe(true);
      expect(plain.out).not.toContain("lines shown");
    }
  });

  it("context_tree_query by ref without offset gives the same page", async () => {
    const model = await loadSessionModel(session);
    const byRef = await queryArchive(model.state, ["t1"], model.blobDir);
    const page = await queryPage(model.state, "t1", FIRST_PAGE, model.blobDir, new Map());
    expect(byRef.content[0]!.text.endsWith(`\n\n${page.content[0]!.text}`)).toBe(true);
    expect(page.content[0]!.text.startsWith("0123456789abcdef".repeat(3_200))).toBe(true);
  });
});
