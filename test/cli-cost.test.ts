// `chainpress cost` as users run it (dist/): the real sessions' bills, a folder, --json's names,
// --chart as well-formed SVG, --cache-ttl, a session without recorded usage, bad paths; and
// that it never writes a session.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, copyReal, ensureBuilt, NO_AGENT_DIR, REAL_SESSIONS, removeTempDirs, runCli, sha256, tempDir } from "./helpers/cli-harness.js";
import { allElements, parseStrictXml } from "./helpers/strict-xml.js";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { PiHost, tempAgentDir } from "./helpers/pi-host.js";

const realNames = fs.readdirSync(REAL_SESSIONS).filter((f) => f.endsWith(".jsonl")).sort();

beforeAll(() => ensureBuilt(), 300_000);
afterAll(() => removeTempDirs());

interface CostJson {
  ok: boolean;
  sessions: Array<{ file: string; requests: number; recordedCost: number; asRunCost: number; chainpressCost: number | null; chainpressNote: string | null; compressions: number | null; paidBack: number | null; unrecordedRequests: number; estimatedRequests: number; priceSource: string }>;
  totals: { sessions: number; requests: number; recordedCost: number; asRunCost: number };
  failed: Array<{ file: string; error: string }>;
}

function costJson(args: string[]): CostJson {
  const result = runCli(["cost", "--json", ...args]);
  expect(result.stderr).toBe("");
  expect(result.status).toBe(0);
  return JSON.parse(result.out) as CostJson;
}

/** Sum of the recorded `usage.cost.total` of the session's assistant messages, read as plain JSON lines. */
function recordedTotal(file: string): number {
  let total = 0;
  for (const line of fs.readFileSync(file, "utf8").split("\n")) {
    // A line holding two glued entries is one JSON value per entry.
    for (const part of line.split(/(?<=\})(?=\{"type")/)) {
      if (part.trim() === "") continue;
      const entry = JSON.parse(part) as { type?: string; message?: { role?: string; usage?: { cost?: { total?: number } } } };
      if (entry.type === "message" && entry.message?.role === "assistant") total += entry.message.usage?.cost?.total ?? 0;
    }
  }
  return total;
}

describe("chainpress cost on the real sessions", () => {
  for (const name of realNames) {
    it(`${name}: recordedCost is the recorded bill, asRunCost within 2% of it; the file is untouched`, () => {
      const dir = tempDir();
      const file = copyReal(name, dir);
      const before = sha256(file);
      const report = costJson([file]);
      expect(report.sessions).toHaveLength(1);
      const s = report.sessions[0]!;
      expect(s.file).toBe(file);
      expect(s.requests).toBeGreaterThan(100);
      expect(s.recordedCost).toBeCloseTo(recordedTotal(file), 6);
      expect(Math.abs(s.asRunCost - s.recordedCost) / s.recordedCost).toBeLessThan(0.02);
      expect(s.priceSource).toMatch(/^recorded/);
      // The chainpress-live policy replayed: a bill, its compressions and how many paid back.
      expect(s.chainpressNote).toBeNull();
      expect(s.chainpressCost).toBeGreaterThan(0);
      expect(s.compressions).toBeGreaterThanOrEqual(s.paidBack!);
      expect(s.paidBack).toBeGreaterThanOrEqual(0);
      expect(sha256(file)).toBe(before);
      expect(fs.readdirSync(dir)).toEqual([name]);
    });
  }

  it("a folder: every session, sorted, and totals that add them up; a *.jsonl link in it is skipped with a note", () => {
    const dir = tempDir();
    for (const name of realNames) copyReal(name, dir);
    fs.symlinkSync(path.join(dir, realNames[0]!), path.join(dir, "zz-link.jsonl"));
    const result = runCli(["cost", "--json", dir]);
    expect(result.status).toBe(0);
    expect(result.stderr).toMatch(/note: skipped .*zz-link\.jsonl: a symbolic link/);
    const report = JSON.parse(result.out) as CostJson;
    expect(report.sessions.map((s) => path.basename(s.file))).toEqual(realNames);
    expect(report.totals.sessions).toBe(realNames.length);
    expect(report.totals.requests).toBe(report.sessions.reduce((a, s) => a + s.requests, 0));
    expect(report.totals.recordedCost).toBeCloseTo(report.sessions.reduce((a, s) => a + s.recordedCost, 0), 9);
    expect(report.totals.asRunCost).toBeCloseTo(report.sessions.reduce((a, s) => a + s.asRunCost, 0), 9);
    const text = runCli(["cost", dir]);
    expect(text.status).toBe(0);
    expect(text.out).toMatch(new RegExp(`total: ${realNames.length} sessions`));
    expect(report.totals.chainpressCost).toBeCloseTo(report.sessions.reduce((a, s) => a + s.chainpressCost!, 0), 9);
    expect(text.out).toMatch(/\n {2}chainpress: +\$/);
  });

  it("--cache-ttl 1h changes the as-run figures; a bad value is a usage error", () => {
    const file = path.join(REAL_SESSIONS, "session.jsonl");
    const fiveMinutes = costJson([file]).sessions[0]!;
    const oneHour = costJson([file, "--cache-ttl", "1h"]).sessions[0]!;
    expect(oneHour.recordedCost).toBe(fiveMinutes.recordedCost);
    expect(oneHour.asRunCost).not.toBeCloseTo(fiveMinutes.asRunCost, 2);
    expect(costJson([file, "--cache-ttl", "5m"]).sessions[0]!.asRunCost).toBe(fiveMinutes.asRunCost);
    const bad = runCli(["cost", file, "--cache-ttl", "10m"]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/--cache-ttl.*expected 5m or 1h, got "10m"/);
  });
});

describe("chainpress cost --chart", () => {
  it("writes one well-formed, self-contained SVG for one session", () => {
    const dir = tempDir();
    const chart = path.join(dir, "cost.svg");
    const result = runCli(["cost", path.join(REAL_SESSIONS, "before-compaction.jsonl"), "--chart", chart]);
    expect(result.status).toBe(0);
    const root = parseStrictXml(fs.readFileSync(chart, "utf8"));
    expect(root.name).toBe("svg");
    const names = new Set(allElements(root).map((e) => e.name));
    for (const forbidden of ["script", "image", "a", "foreignObject"]) expect(names.has(forbidden)).toBe(false);
    const texts = allElements(root).filter((e) => e.name === "text").map((e) => e.text);
    // Both runs, and the compressions the chainpress run made, each named in the legend.
    const [cost] = costJson([path.join(REAL_SESSIONS, "before-compaction.jsonl")]).sessions;
    for (const label of ["as run", "chainpress", `compression (${cost!.compressions})`]) expect(texts, label).toContain(label);
    // Two series per panel: prompt tokens and cumulative bill, as run and with chainpress.
    expect(allElements(root).filter((e) => e.name === "polyline")).toHaveLength(4);
    expect(fs.readdirSync(dir)).toEqual(["cost.svg"]);
  });

  it("refuses several sessions (usage error) and a chart path that is a link", () => {
    const dir = tempDir();
    const several = runCli(["cost", REAL_SESSIONS, "--chart", path.join(dir, "c.svg")]);
    expect(several.status).toBe(2);
    expect(several.stderr).toMatch(/--chart takes exactly one session \(4 given\)/);
    const target = path.join(dir, "elsewhere.svg");
    fs.writeFileSync(target, "kept");
    fs.symlinkSync(target, path.join(dir, "link.svg"));
    const linked = runCli(["cost", path.join(REAL_SESSIONS, "session.jsonl"), "--chart", path.join(dir, "link.svg")]);
    expect(linked.status).toBe(1);
    expect(linked.stderr).toMatch(/link\.svg/);
    expect(fs.readFileSync(target, "utf8")).toBe("kept");
    expect(fs.lstatSync(path.join(dir, "link.svg")).isSymbolicLink()).toBe(true);
    const noFolder = path.join(dir, "missing", "c.svg");
    const unwritable = runCli(["cost", path.join(REAL_SESSIONS, "session.jsonl"), "--chart", noFolder]);
    expect(unwritable.status).toBe(1);
    expect(unwritable.stderr).toMatch(new RegExp(`^chainpress: ${noFolder}: cannot write the chart: `));
  });
});

describe("chainpress cost on sessions it cannot bill", () => {
  it("a session without recorded usage is replayed on estimates, not refused", () => {
    const dir = tempDir();
    const file = path.join(dir, "no-usage.jsonl");
    const lines = fs.readFileSync(path.join(REAL_SESSIONS, "before-compaction.jsonl"), "utf8").split("\n").filter((l) => l !== "");
    const stripped = lines.map((line) => {
      const entry = JSON.parse(line) as { message?: { role?: string; usage?: unknown } };
      if (entry.message?.role === "assistant") delete entry.message.usage;
      return JSON.stringify(entry);
    });
    fs.writeFileSync(file, `${stripped.join("\n")}\n`);
    const s = costJson([file]).sessions[0]!;
    const real = costJson([path.join(REAL_SESSIONS, "before-compaction.jsonl")]).sessions[0]!;
    expect(s.recordedCost).toBe(0);
    expect(s.requests).toBe(real.requests);
    expect(s.unrecordedRequests).toBe(s.requests);
    expect(s.estimatedRequests).toBe(s.requests);
    expect(s.asRunCost).toBeGreaterThan(0);
    expect(s.priceSource).toBe("table");
    const text = runCli(["cost", file]);
    expect(text.status).toBe(0);
    expect(text.out).toMatch(/no usage: +484 requests recorded none; replayed on estimates/);
    expect(text.out).toMatch(/nothing recorded to check against/);
  });

  it("a missing path, a named link, and a file that is not a session: an error naming the file, exit 1, the others still reported", () => {
    const dir = tempDir();
    const missing = path.join(dir, "missing.jsonl");
    const link = path.join(dir, "link.jsonl");
    fs.symlinkSync(path.join(REAL_SESSIONS, "session.jsonl"), link);
    const notSession = path.join(dir, "other.jsonl");
    fs.writeFileSync(notSession, '{"hello":1}\n');
    const good = path.join(REAL_SESSIONS, "session.jsonl");
    const result = runCli(["cost", "--json", missing, link, notSession, good]);
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(new RegExp(`chainpress: ${missing}: `));
    expect(result.stderr).toMatch(new RegExp(`chainpress: ${link}: the session path is a symbolic link`));
    expect(result.stderr).toMatch(new RegExp(`chainpress: ${notSession}(:1)?: `));
    const report = JSON.parse(result.out) as CostJson;
    expect(report.ok).toBe(false);
    expect(report.failed.map((f) => f.file)).toEqual([missing, link, notSession]);
    expect(report.sessions.map((s) => s.file)).toEqual([good]);
    // A FIFO is refused, not read (a read would wait for a writer).
    const fifo = path.join(dir, "fifo.jsonl");
    expect(spawnSync("mkfifo", [fifo]).status).toBe(0);
    const refused = runCli(["cost", fifo], { timeoutMs: 30_000 });
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain(`chainpress: ${fifo}: is a FIFO, not a regular file`);
    // With --follow-links the named link is read by its real path.
    const followed = costJson([link, "--follow-links"]);
    expect(followed.sessions[0]!.file).toBe(fs.realpathSync(link));
  });

  it("a malformed line is left out with a warning naming file and line", () => {
    const dir = tempDir();
    const file = copyReal("session.jsonl", dir);
    const lines = fs.readFileSync(file, "utf8").split("\n");
    lines.splice(5, 0, "{not json");
    fs.writeFileSync(file, lines.join("\n"));
    const result = runCli(["cost", file]);
    expect(result.status).toBe(0);
    expect(result.stderr).toMatch(new RegExp(`chainpress: warning: ${file}:6: `));
  });
});

describe("chainpress cost progress", () => {
  it("on a terminal, one line per session on stderr, cleared before its report (util-linux script(1) gives the terminal)", () => {
    const files = ["session.jsonl", "large-session.jsonl"].map((f) => path.join(REAL_SESSIONS, f));
    const command = [process.execPath, CLI, "cost", ...files].map((a) => `'${a}'`).join(" ");
    const result = spawnSync("script", ["-qec", command, "/dev/null"], { env: { ...process.env, NO_COLOR: "1", PI_CODING_AGENT_DIR: NO_AGENT_DIR }, encoding: "utf8" });
    expect(result.status).toBe(0);
    const terminal = result.stdout;
    // A long path is shown by its last 60 characters.
    expect(terminal).toMatch(/\x1b\[2Kchainpress: replaying \[1\/2\] \S*\/session\.jsonl/);
    expect(terminal).toMatch(/\x1b\[2Kchainpress: replaying \[2\/2\] \S*\/large-session\.jsonl/);
    // Each report starts on a cleared line, after its session's progress line.
    expect(terminal.indexOf(`\r\x1b[2K${files[0]}`)).toBeGreaterThan(terminal.indexOf("replaying [1/2]"));
    // Without a terminal (the other tests), stderr stays empty: see costJson.
    const piped = runCli(["cost", ...files]);
    expect(piped.stderr).toBe("");
  });
});

describe("chainpress cost --help", () => {
  it("names the command's options and says it is read-only", () => {
    const result = runCli(["cost", "--help"]);
    expect(result.status).toBe(0);
    for (const flag of ["--json", "--chart", "--cache-ttl", "--rolling-window", "--protected-tools", "--spill-threshold", "--no-open-chains", "--follow-links"]) expect(result.out).toContain(flag);
    expect(result.out).toMatch(/Read-only/);
  });
});

describe("/pruner status's saving so far", () => {
  it("is the cost replay's: the same bills `chainpress cost` gives for the session under the same settings", async () => {
    const dir = tempDir("chainpress-status-bill-");
    const file = copyReal("session.jsonl", dir);
    const agentDir = tempAgentDir({ workers: 0 });
    const host = await PiHost.start(SessionManager.open(file, dir), agentDir);
    await host.command("/pruner status");
    const line = host.notices.at(-1)!.message.split("\n").find((text) => text.startsWith("saving so far:")) ?? "";
    const figures = /over ([\d,]+) requests \(replayed: \$(\d+\.\d\d) without chainpress, \$(\d+\.\d\d) with; 5-minute cache\)$/.exec(line);
    expect(figures, line).not.toBeNull();
    // The test agent dir runs the flush at each reply with a window of 3 (bench/lib/pi-agent-dir.ts).
    const [cost] = costJson(["--trigger", "each-reply", "--rolling-window", "3", file]).sessions;
    expect(Number(figures![1]!.replace(/,/g, ""))).toBe(cost!.requests);
    expect(figures![2]).toBe(cost!.asRunCost.toFixed(2));
    expect(figures![3]).toBe(cost!.chainpressCost!.toFixed(2));
    expect(cost!.chainpressCost!).toBeLessThan(cost!.asRunCost);
    fs.rmSync(agentDir, { recursive: true, force: true });
  });

  it("a session file over 16 MiB is not replayed on pi's thread: the line names the command that does", async () => {
    const dir = tempDir("chainpress-status-bill-large-");
    const file = copyReal("session.jsonl", dir);
    const lines = fs.readFileSync(file, "utf8").trimEnd().split("\n");
    const last = JSON.parse(lines[lines.length - 1]!) as { id: string };
    const pad = { type: "custom", customType: "padding", data: { text: "x".repeat(17 * 1024 * 1024) }, id: "pad00001", parentId: last.id, timestamp: new Date().toISOString() };
    fs.appendFileSync(file, `${JSON.stringify(pad)}\n`);
    const agentDir = tempAgentDir({ workers: 0 });
    const host = await PiHost.start(SessionManager.open(file, dir), agentDir);
    await host.command("/pruner status");
    const line = host.notices.at(-1)!.message.split("\n").find((text) => text.startsWith("saving so far:"));
    expect(line).toBe(`saving so far: not replayed here (${(fs.statSync(file).size / 1e6).toFixed(0)} MB session); run: chainpress cost ${JSON.stringify(file)}`);
    fs.rmSync(agentDir, { recursive: true, force: true });
  });
});
