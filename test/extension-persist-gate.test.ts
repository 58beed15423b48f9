// Issue 11 item 2: the live flush must find its closing reply wherever pi put it, every wait is
// bounded, and a /pruner command that cannot run says why within seconds. pi's real
// SessionManager holds the session; the host plays pi's event order around it.
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { afterEach, describe, expect, it } from "vitest";
import fs from "node:fs";
import { PiHost, tempAgentDir } from "./helpers/pi-host.js";
import { chainMessages, MessageClock, piResult, piToolCall, piUser } from "./helpers/pi-session.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});
function agentDir(): string {
  const dir = tempAgentDir();
  dirs.push(dir);
  return dir;
}

async function playChains(host: PiHost, clock: MessageClock, labels: string[]): Promise<void> {
  for (const label of labels) {
    for (const message of chainMessages(clock, label, [longOutput(label)])) await host.message(message);
    await host.endRun();
    await host.idle();
  }
}

/** Resolves with "done", or "timeout" after `ms`: a hung promise fails the test fast. */
function within<T>(promise: Promise<T>, ms: number): Promise<"done" | "timeout"> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<"timeout">((resolve) => (timer = setTimeout(() => resolve("timeout"), ms)));
  return Promise.race([promise.then(() => "done" as const), timeout]).finally(() => clearTimeout(timer));
}

/** Holds the worker pool until released: the flush's first append comes as late as we like. */
function holdRunner(host: PiHost): () => void {
  const inline = host.runtime.runner.get();
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  host.runtime.runner.get = () => ({ workers: 0, run: async (task, onStart) => held.then(() => inline.run(task, onStart)), close: async () => undefined });
  return release;
}

/** Long enough that compressing the chain shrinks the context (core/chain-shrink.ts). */
const longOutput = (label: string): string => `${label} output\n`.repeat(40);

const blockIds = (host: PiHost) => host.customEntries("context-prune-chain").map((e) => e.data.blockId);

describe("the live flush's wait for the closing reply", () => {
  it("finds the reply after pi appended 120 more entries before the flush's first append", async () => {
    const host = await PiHost.start(SessionManager.inMemory(), agentDir());
    const clock = new MessageClock();
    await playChains(host, clock, ["c1", "c2", "c3"]);
    const release = holdRunner(host);
    const c4 = chainMessages(clock, "c4", [longOutput("c4")]);
    for (const message of c4) await host.message(message); // the closing reply is persisted here
    await host.endRun();
    // A new run starts while the flush is still busy: 1 user message + 60 call/result pairs.
    await host.message(piUser(clock, "next task"));
    for (let i = 0; i < 60; i++) {
      await host.message(piToolCall(clock, `n${i}`, "bash", { command: `echo ${i}` }));
      await host.message(piResult(clock, `n${i}`, "bash", `out ${i}`));
    }
    expect(host.sessionManager.getEntries().length).toBeGreaterThan(120 + c4.length);
    release();
    expect(await within(host.idle(), 5_000)).toBe("done");
    expect(blockIds(host)).toEqual(["b1"]);
    // The chain entry hangs below the closing reply, on the branch pi continues.
    const branch = host.sessionManager.getBranch();
    const closingAt = branch.findIndex((e) => e.type === "message" && e.message.timestamp === (c4.at(-1) as { timestamp: number }).timestamp);
    const chainAt = branch.findIndex((e) => e.type === "custom" && e.customType === "context-prune-chain");
    expect(chainAt).toBeGreaterThan(closingAt);
  });

  it("gives up when pi never persists the reply: the flush ends with a warning, the next reply heals", async () => {
    const host = await PiHost.start(SessionManager.inMemory(), agentDir(), { persistTimeoutMs: 300 });
    const clock = new MessageClock();
    await playChains(host, clock, ["c1", "c2", "c3"]);
    const c4 = chainMessages(clock, "c4", [longOutput("c4")]);
    for (const message of c4.slice(0, -1)) await host.message(message);
    // message_end for the reply, which pi then drops (an aborted run): never persisted.
    await host.emit("message_end", { type: "message_end", message: c4.at(-1) });
    expect(await within(host.idle(), 3_000)).toBe("done");
    expect(blockIds(host)).toEqual([]);
    expect(host.notices.at(-1)?.message).toMatch(/pi did not persist the closing reply within 0.3 s/);
    await playChains(host, clock, ["c5"]);
    expect(blockIds(host)).toHaveLength(1);
  });

  it("/pruner status and /pruner compact answer within seconds while a flush waits, saying why", async () => {
    const host = await PiHost.start(SessionManager.inMemory(), agentDir(), { commandWaitMs: 200 });
    const clock = new MessageClock();
    await playChains(host, clock, ["c1", "c2", "c3"]);
    const c4 = chainMessages(clock, "c4", [longOutput("c4")]);
    for (const message of c4.slice(0, -1)) await host.message(message);
    await host.emit("message_end", { type: "message_end", message: c4.at(-1) });
    await new Promise((resolve) => setTimeout(resolve, 50));

    const started = Date.now();
    expect(await within(host.command("/pruner status"), 2_000)).toBe("done");
    expect(host.notices.at(-1)!.message).toMatch(/^pruner: on/);
    expect(host.notices.at(-1)!.message).toMatch(/busy: a chain compression has been running for \d+ s, waiting for pi to persist the closing reply/);
    expect(await within(host.command("/pruner compact"), 2_000)).toBe("done");
    expect(host.notices.at(-1)).toMatchObject({ level: "warning" });
    expect(host.notices.at(-1)!.message).toMatch(/^pruner: compact not run: a chain compression has been running/);
    expect(Date.now() - started).toBeLessThan(3_000);

    // Once pi persists the reply, the flush goes on and the dropped compact left nothing queued.
    host.sessionManager.appendMessage(c4.at(-1) as never);
    await host.endRun();
    expect(await within(host.idle(), 3_000)).toBe("done");
    expect(blockIds(host)).toEqual(["b1"]);
  });
});
