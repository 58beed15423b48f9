// Issue 47 item 4: a chain whose compressed form would not be shorter than what it replaces is
// left as it is, by `chainpress compact` and by the live flush alike (core/chain-shrink.ts,
// checked by the planner before any ref is reserved); a chain that shrinks is still compressed.
import fs from "node:fs";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { chainShrink, shrinks, WOULD_GROW_CAUSE } from "../src/core/chain-shrink.js";
import { ensureBuilt, pruneEntries, removeTempDirs, runCli, settle } from "./helpers/cli-harness.js";
import { PiHost, tempAgentDir } from "./helpers/pi-host.js";
import { chainMessages, MessageClock } from "./helpers/pi-session.js";
import { SessionBuilder } from "./helpers/session-builder.js";

beforeAll(ensureBuilt, 180_000);
afterAll(removeTempDirs);

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** Long enough that its chain shrinks when compressed. */
const BIG = "line of a long tool output\n".repeat(200);

interface Report {
  compressed: string[];
  appendedEntries: number;
  skipped: { byReason: Record<string, number> };
  context: { beforeChars: number; afterChars: number };
}

/** The shape, small: one-call chains whose outputs are one character; `big` picks the chains with a long output. */
function oneCallSession(chains: number, big: (i: number) => boolean = () => false): string {
  const s = new SessionBuilder();
  for (let i = 0; i < chains; i++) s.chain(`task ${i}`, [{ id: `call_${i}`, name: "bash", args: { command: `echo ${i}` }, output: big(i) ? BIG : "x" }]);
  const file = s.writeTemp();
  dirs.push(file.slice(0, file.lastIndexOf("/")));
  settle(file);
  return file;
}

function compact(file: string): Report {
  const run = runCli(["compact", file, "--json"]);
  expect(run.status, run.stderr).toBe(0);
  return (JSON.parse(run.out) as { sessions: Array<{ report: Report }> }).sessions[0]!.report;
}

describe("chainpress compact", () => {
  it("leaves a session of 50 one-call chains with tiny outputs byte for byte as it was, each skip reported as would-grow", () => {
    const file = oneCallSession(50);
    const before = fs.readFileSync(file);
    const report = compact(file);
    expect(report.compressed).toEqual([]);
    expect(report.appendedEntries).toBe(0);
    expect(report.skipped.byReason).toEqual({ "would-grow": 50 });
    expect(fs.readFileSync(file).equals(before)).toBe(true);
    expect(report.context.afterChars).toBe(report.context.beforeChars);
  });

  it("a mixed session: only the chains that shrink are compressed, and the context shrinks", () => {
    const file = oneCallSession(20, (i) => i % 4 === 0);
    const report = compact(file);
    expect(report.compressed).toEqual(["b1", "b2", "b3", "b4", "b5"]);
    expect(report.skipped.byReason).toEqual({ "would-grow": 15 });
    // Only upstream's entry kinds, none for the chains left alone.
    expect(new Set(pruneEntries(file).map((e) => e.customType))).toEqual(new Set(["context-prune-index", "context-prune-chain"]));
    expect(report.context.afterChars).toBeLessThan(report.context.beforeChars);
    // A second run finds nothing more to do and writes nothing.
    const size = fs.statSync(file).size;
    settle(file);
    expect(compact(file).appendedEntries).toBe(0);
    expect(fs.statSync(file).size).toBe(size);
  });

  it("render's context never grows after compact", () => {
    for (const file of [oneCallSession(30), oneCallSession(30, (i) => i % 3 === 0)]) {
      const size = (args: string[]) => {
        const run = runCli(["render", file, ...args]);
        expect(run.status, run.stderr).toBe(0);
        return run.stdout.length;
      };
      const before = size([]);
      compact(file);
      expect(size([])).toBeLessThanOrEqual(before);
    }
  });
});

describe("the live flush", () => {
  it("leaves one-call chains with tiny outputs alone, and compresses the one that shrinks", async () => {
    const agentDir = tempAgentDir();
    dirs.push(agentDir);
    const host = await PiHost.start(SessionManager.inMemory(), agentDir);
    const clock = new MessageClock();
    for (let i = 0; i < 12; i++) {
      for (const message of chainMessages(clock, `c${i}`, [i === 5 ? BIG : "x"])) await host.message(message);
      await host.endRun();
      await host.idle();
    }
    const chains = host.customEntries("context-prune-chain");
    expect(chains.map((e) => e.data.blockId)).toEqual(["b1"]);
    expect(host.customEntries("context-prune-index")).toHaveLength(1);
    expect(host.customEntries("context-prune-diagnostic")).toEqual([]);
    const { input, output } = await host.context();
    expect(JSON.stringify(output).length).toBeLessThan(JSON.stringify(input).length);    // `/pruner compact` (window 0) leaves the other eleven alone too, and says why, once.
    await host.command("/pruner compact");
    expect(host.notices.at(-1)!.message).toBe(`pruner: no chains eligible for compaction (11 skipped \u2014 ${WOULD_GROW_CAUSE})`);
    expect(host.customEntries("context-prune-chain")).toHaveLength(1);
  });
});

describe("chainShrink (core)", () => {
  const call = (output: string) => {
    const s = new SessionBuilder();
    s.chain("p", [{ id: "a", name: "read", args: { path: "/w/f.ts" }, output }]);
    const messages = s.lines.slice(1).map((line) => (line as { message: any }).message);
    const [, assistant, result] = messages;
    const record = { toolCallId: "a", toolName: "read", args: { path: "/w/f.ts" }, timestamp: result.timestamp, resultTimestamp: result.timestamp };
    return chainShrink({
      inner: [assistant, result],
      records: [record],
      toolRefs: ["t1"],
      blockId: "b1",
      mapCalls: [{ ref: "t1", toolName: "read", args: { path: "/w/f.ts" }, failed: false }],
      mapPerChain: 2_000,
      protectedToolCallIds: new Set(),
    });
  };

  it("measures exactly what render prints: the inserted message, and the messages it replaces", () => {
    const s = new SessionBuilder();
    s.chain("p", [{ id: "a", name: "read", args: { path: "/w/f.ts" }, output: BIG }]);
    const file = s.writeTemp();
    dirs.push(file.slice(0, file.lastIndexOf("/")));
    settle(file);
    const render = () => runCli(["render", file]).out.trim().split("\n");
    const before = render();
    compact(file);
    const after = render();
    const shrink = call(BIG);
    const inserted = after.find((line) => line.includes("<compressed-chain"))!;
    expect(inserted.length).toBe(shrink.inserted);
    // User and closing reply stay; the call and its result go.
    const dropped = before.filter((line) => !after.includes(line));
    expect(dropped.reduce((sum, line) => sum + line.length, 0)).toBe(shrink.dropped);
  });

  it("a one-character output does not shrink; a long one does", () => {
    expect(shrinks(call("x"))).toBe(false);
    expect(shrinks(call(BIG))).toBe(true);
  });
});
