/**
 * The live flush on pi's real SessionManager: compression past the rolling window, entries
 * written after the closing message, healing of a stranded chain when nothing else is pending,
 * serialisation, and the worker pool's lifecycle.
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { afterEach, describe, expect, it } from "vitest";
import { PiHost, tempAgentDir } from "./helpers/pi-host.js";
import { chainMessages, MessageClock, piReply, piUser } from "./helpers/pi-session.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});
function agentDir(settings?: Record<string, unknown>): string {
  const dir = tempAgentDir(settings);
  dirs.push(dir);
  return dir;
}

/** Play `count` closed chains through the host, pi's way, waiting for each flush. */
async function playChains(host: PiHost, clock: MessageClock, labels: string[], outputs = (label: string) => [`${label} output A`, `${label} output B`]): Promise<void> {
  for (const label of labels) {
    for (const message of chainMessages(clock, label, outputs(label))) await host.message(message);
    await host.endRun();
    await host.idle();
  }
}

const blockIds = (host: PiHost) => host.customEntries("context-prune-chain").map((e) => e.data.blockId);

describe("live flush", () => {
  it("compresses the closed chains older than the rolling window (3)", async () => {
    const host = await PiHost.start(SessionManager.inMemory(), agentDir());
    const clock = new MessageClock();
    await playChains(host, clock, ["c1", "c2", "c3"]);
    expect(blockIds(host)).toEqual([]);
    await playChains(host, clock, ["c4", "c5"]);
    expect(blockIds(host)).toEqual(["b1", "b2"]);
    const starts = host.customEntries("context-prune-chain").map((e) => e.data.startUserTimestamp);
    const firstUsers = host.sessionManager.getEntries().filter((e) => e.type === "message" && e.message.role === "user").map((e) => (e as any).message.timestamp);
    expect(starts).toEqual(firstUsers.slice(0, 2));
    expect(host.notices.map((n) => n.message)).toEqual(["pruner: compressed 1 chain (b1)", "pruner: compressed 1 chain (b2)"]);
  });

  it("appends the entries after pi has persisted the closing message, not from inside message_end", async () => {
    const host = await PiHost.start(SessionManager.inMemory(), agentDir());
    const clock = new MessageClock();
    await playChains(host, clock, ["c1", "c2", "c3"]);
    const last = chainMessages(clock, "c4", ["c4 output"]);
    for (const message of last.slice(0, -1)) await host.message(message);
    const closing = last[last.length - 1] as { timestamp: number };
    await host.emit("message_end", { type: "message_end", message: closing });
    await new Promise((resolve) => setTimeout(resolve, 20));
    // The flush is running, but must not write before pi persists the reply.
    expect(host.customEntries("context-prune-chain")).toEqual([]);
    host.sessionManager.appendMessage(closing as never);
    await host.endRun();
    await host.idle();
    const entries = host.sessionManager.getEntries();
    const closingIndex = entries.findIndex((e) => e.type === "message" && e.message.timestamp === closing.timestamp);
    const chainIndex = entries.findIndex((e) => e.type === "custom" && e.customType === "context-prune-chain");
    expect(chainIndex).toBeGreaterThan(closingIndex);
  });

  it("a failed reply, which pi 1.6's recovery may omit, triggers no flush; the reply pi keeps does", async () => {
    const host = await PiHost.start(SessionManager.inMemory(), agentDir());
    const clock = new MessageClock();
    await playChains(host, clock, ["c1", "c2", "c3"]);
    const chain = chainMessages(clock, "c4", ["c4 output"]);
    for (const message of chain.slice(0, -1)) await host.message(message);
    await host.message({ ...(piReply(clock, "") as object), stopReason: "error" });
    await host.endRun();
    await host.idle();
    expect(blockIds(host)).toEqual([]);
    await host.message(piReply(clock, "c4 done after retry"));
    await host.endRun();
    await host.idle();
    expect(blockIds(host)).toEqual(["b1"]);
  });

  it("writes nothing when tree navigation rebuilt the state during the flush", async () => {
    const host = await PiHost.start(SessionManager.inMemory(), agentDir());
    const clock = new MessageClock();
    await playChains(host, clock, ["c1", "c2", "c3"]);
    const messages = chainMessages(clock, "c4", ["c4 out"]);
    for (const message of messages.slice(0, -1)) await host.message(message);
    await host.emit("message_end", { type: "message_end", message: messages.at(-1) });
    await host.emit("session_tree", { type: "session_tree", newLeafId: null, oldLeafId: null });
    host.sessionManager.appendMessage(messages.at(-1) as never);
    await host.endRun();
    await host.idle();
    expect(host.customEntries("context-prune-chain")).toEqual([]);
    await host.message(piUser(clock, "and now?"));
    await host.message(piReply(clock, "now it is compressed"));
    await host.endRun();
    await host.idle();
    expect(blockIds(host)).toHaveLength(1);
  });

  it("heals a stranded chain at the next reply even when nothing else is pending", async () => {
    const host = await PiHost.start(SessionManager.inMemory(), agentDir());
    const clock = new MessageClock();
    await playChains(host, clock, ["c1", "c2", "c3"]);
    host.failAppends = 1; // c1's index entry fails: c1 is stranded
    await playChains(host, clock, ["c4"]);
    expect(blockIds(host)).toEqual([]);
    expect(host.notices.at(-1)).toMatchObject({ level: "warning" });
    expect(host.notices.at(-1)!.message).toMatch(/^pruner: chain left uncompressed, retried at the next reply: .*injected append failure/);
    // A plain conversational reply: no tool calls, so no new chain crosses the window.
    await host.message(piUser(clock, "thanks"));
    await host.message(piReply(clock, "you are welcome"));
    await host.endRun();
    await host.idle();
    expect(blockIds(host)).toEqual(["b2"]); // b1 was burnt by the failed attempt: gaps are legal
    expect(host.customEntries("context-prune-chain")[0]!.data.startUserTimestamp).toBe((host.sessionManager.getEntries().find((e) => e.type === "message") as any).message.timestamp);
  });

  it("runs one flush at a time and merges requests that pile up", async () => {
    const host = await PiHost.start(SessionManager.inMemory(), agentDir());
    const clock = new MessageClock();
    await playChains(host, clock, ["c1", "c2", "c3", "c4"]);
    const inline = host.runtime.runner.get();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const passes: number[] = []; // chainStart of the first task of each pass
    host.runtime.runner.get = () => {
      passes.push(-1);
      return { workers: 0, run: async (task, onStart) => (passes.length === 1 ? gate.then(() => inline.run(task, onStart)) : inline.run(task, onStart)), close: async () => undefined };
    };
    // Three replies in a row while the first flush is held: three flush opportunities.
    for (const label of ["c5", "c6", "c7"]) {
      for (const message of chainMessages(clock, label, [`${label} out`])) await host.message(message);
      await host.endRun();
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(passes).toHaveLength(1); // the second pass waits for the first
    release();
    await host.idle();
    expect(passes).toHaveLength(2); // c6's and c7's requests were merged into one pass
    expect(blockIds(host)).toEqual(["b1", "b2", "b3", "b4"]);
    expect(new Set(host.customEntries("context-prune-chain").map((e) => e.data.startUserTimestamp)).size).toBe(4);
  });

  it("returns from message_end at once: the flush never holds pi's event queue", async () => {
    const host = await PiHost.start(SessionManager.inMemory(), agentDir());
    const clock = new MessageClock();
    await playChains(host, clock, ["c1", "c2", "c3"]);
    let release!: () => void;
    const blocked = new Promise<void>((resolve) => (release = resolve));
    host.runtime.runner.get = () => ({ workers: 0, run: async () => blocked.then(() => { throw new Error("released"); }), close: async () => undefined });
    const messages = chainMessages(clock, "c4", ["c4 out"]);
    for (const message of messages.slice(0, -1)) await host.message(message);
    const started = Date.now();
    await host.emit("message_end", { type: "message_end", message: messages.at(-1) });
    expect(Date.now() - started).toBeLessThan(50);
    release();
    host.sessionManager.appendMessage(messages.at(-1) as never);
    await host.endRun();
    await host.idle();
  });

  it("spills through the real worker pool, started lazily and closed on session_shutdown", async () => {
    const sessionDir = fs.mkdtempSync(path.join(os.tmpdir(), "chainpress-sessions-"));
    dirs.push(sessionDir);
    const host = await PiHost.start(SessionManager.create(sessionDir, sessionDir), agentDir({ workers: 1, spillThreshold: 1000 }));
    const clock = new MessageClock();
    await playChains(host, clock, ["c1", "c2", "c3"], (label) => [`${label} `.repeat(400)]);
    expect(host.runtime.runner.started).toBe(false);
    await playChains(host, clock, ["c4"]);
    expect(host.runtime.runner.started).toBe(true);
    const [record] = host.customEntries("context-prune-index")[0]!.data.toolCalls;
    expect(record.resultText).toBe("");
    expect(path.dirname(record.spillPath)).toBe(path.join(sessionDir, `${host.sessionManager.getSessionId()}-blobs`));
    expect(fs.readFileSync(record.spillPath, "utf8")).toBe("c1 ".repeat(400));
    await host.emit("session_shutdown", { type: "session_shutdown", reason: "quit" });
    expect(host.runtime.runner.started).toBe(false);
  });

  it("does nothing while chainpress is off", async () => {
    const host = await PiHost.start(SessionManager.inMemory(), agentDir({ workers: 0, enabled: false }));
    await playChains(host, new MessageClock(), ["c1", "c2", "c3", "c4", "c5"]);
    expect(blockIds(host)).toEqual([]);
    expect(host.runtime.runner.started).toBe(false);
  });
});
