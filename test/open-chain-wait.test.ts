// Issue 47 item 5: the request after a batch that triggered an open-chain step waits for the step
// (bounded by openChainWaitMs), so it carries the step's stubs however slow the step is. The step
// is made slow on purpose by a real runner whose chain tasks start late; the test asserts on what
// the request contained, never on how long anything took.
import fs from "node:fs";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { afterEach, describe, expect, it } from "vitest";
import { createChainRunner, type ChainRunner } from "../src/main/chain-runner.js";
import { PiHost, tempAgentDir } from "./helpers/pi-host.js";
import { MessageClock, piToolCall, piResult, piUser } from "./helpers/pi-session.js";

const dirs: string[] = [];
const hosts: PiHost[] = [];
afterEach(async () => {
  for (const host of hosts.splice(0)) await host.idle();
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

const OPEN_CHAINS = { triggerTokens: 2_000, keepRecent: 2, minReclaimTokens: 1_000 };
/** About 1,500 tokens: two outside the keep window (the fourth call's batch) pass the trigger. */
const OUTPUT = "a line of a long read\n".repeat(270);

/** A real inline runner whose chain tasks start `delayMs` late: the step is slow, whatever the machine. */
function slowRunner(delayMs: number): (workers: number) => ChainRunner {
  return (workers) => {
    const real = createChainRunner(workers);
    return {
      workers: real.workers,
      run: async (task, onStart) => {
        await new Promise((resolve) => setTimeout(resolve, delayMs));
        return real.run(task, onStart);
      },
      scan: (task) => real.scan(task),
      search: (task, deadline) => real.search(task, deadline),
      close: () => real.close(),
    };
  };
}

/** Plays an open chain of `calls` reads, a batch per call, each followed by pi's turn_end; returns the request after the last batch. */
async function playOpenChain(host: PiHost, calls: number): Promise<unknown[]> {
  const clock = new MessageClock();
  await host.message(piUser(clock, "read them all"));
  for (let i = 0; i < calls; i++) {
    const id = `read_${i}`;
    await host.message(piToolCall(clock, id, "read", { path: `/w/file_${i}.txt` }));
    const result = piResult(clock, id, "read", `${i}\n${OUTPUT}`);
    await host.message(result);
    await host.emit("turn_end", { type: "turn_end", turnIndex: i, message: undefined, toolResults: [result] });
    if (i < calls - 1) await host.idle();
  }
  // The next request goes out at once, as a model that answers instantly makes pi send it.
  return (await host.context()).output;
}

const stubbed = (messages: unknown[]) => messages.filter((m: any) => m.role === "toolResult" && /^\[Archived output of read/.test(m.content?.[0]?.text ?? "")).length;

async function start(delayMs: number, openChainWaitMs?: number): Promise<PiHost> {
  const agentDir = tempAgentDir({ workers: 0, openChains: OPEN_CHAINS });
  dirs.push(agentDir);
  const host = await PiHost.start(SessionManager.inMemory(), agentDir, { createRunner: slowRunner(delayMs), ...(openChainWaitMs === undefined ? {} : { openChainWaitMs }) });
  hosts.push(host);
  return host;
}

describe("the request after a triggered open-chain step", () => {
  it("waits for a slow step and carries its stubs", async () => {
    const host = await start(400);
    const request = await playOpenChain(host, 4);
    expect(host.customEntries("context-prune-index")).toHaveLength(1);
    expect(stubbed(request)).toBe(2);
  });

  it("does not wait past openChainWaitMs: a stuck step leaves the request as it was, and the next one has the stubs", async () => {
    const host = await start(3_000, 20);
    const request = await playOpenChain(host, 4);
    expect(stubbed(request)).toBe(0);
    await host.idle();
    expect(stubbed((await host.context()).output)).toBe(2);
  });
});
