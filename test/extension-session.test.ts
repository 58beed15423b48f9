/**
 * session_start / session_tree reconstruction and the `context` handler, on pi's real
 * SessionManager (file-backed where a restart is involved).
 */

import { SessionManager } from "@mariozechner/pi-coding-agent";
import { afterEach, describe, expect, it } from "vitest";
import { keepTempDir, removeTempDirs, tempDir } from "./helpers/temp-dirs.js";
import { PiHost, tempAgentDir } from "./helpers/pi-host.js";
import { chainMessages, MessageClock } from "./helpers/pi-session.js";

afterEach(removeTempDirs);

async function playChains(host: PiHost, clock: MessageClock, labels: string[]): Promise<void> {
  for (const label of labels) {
    // Long enough that compressing the chain shrinks the context (core/chain-shrink.ts).
    for (const message of chainMessages(clock, label, [`${label} raw output\n`.repeat(40)])) await host.message(message);
    await host.endRun();
    await host.idle();
  }
}

const text = (message: unknown) => JSON.stringify(message);

describe("session_start", () => {
  it("rebuilds the state from the session file: the restarted context renders byte for byte the same", async () => {
    const sessionDir = tempDir("chainpress-sessions-");
    const agentDir = keepTempDir(tempAgentDir());
    const first = await PiHost.start(SessionManager.create(sessionDir, sessionDir), agentDir);
    await playChains(first, new MessageClock(), ["c1", "c2", "c3", "c4", "c5"]);
    const before = (await first.context()).output;
    const file = first.sessionManager.getSessionFile()!;

    const second = await PiHost.start(SessionManager.open(file), agentDir);
    expect(second.runtime.holder.state.chains.size).toBe(2);
    expect([...second.runtime.holder.state.keyByRef.keys()]).toEqual(["t1", "t2"]);
    const after = (await second.context()).output;
    expect(after.map(text)).toEqual(before.map(text));
    expect(after.filter((m) => text(m).includes("<compressed-chain"))).toHaveLength(2);
    expect(after.some((m) => text(m).includes("c1 raw output"))).toBe(false);
  });

  it("rebuilds on session_tree when navigation moves the leaf", async () => {
    const agentDir = keepTempDir(tempAgentDir());
    const host = await PiHost.start(SessionManager.inMemory(), agentDir);
    await playChains(host, new MessageClock(), ["c1", "c2", "c3", "c4"]);
    expect(host.runtime.holder.state.chains.size).toBe(1);
    const generation = host.runtime.holder.generation;
    const chainEntry = host.customEntries("context-prune-chain")[0]!;
    const parent = host.sessionManager.getEntry(chainEntry.id)!.parentId!;
    host.sessionManager.branch(parent); // back to before the chain entry, as /tree would
    await host.emit("session_tree", { type: "session_tree", newLeafId: parent, oldLeafId: chainEntry.id });
    expect(host.runtime.holder.generation).toBe(generation + 1);
    expect(host.runtime.holder.state.chains.size).toBe(0);
  });

  it("reports a broken entry instead of failing the session", async () => {
    const agentDir = keepTempDir(tempAgentDir());
    const sm = SessionManager.inMemory();
    sm.appendCustomEntry("context-prune-index", undefined);
    const host = await PiHost.start(sm, agentDir);
    expect(host.runtime.holder.reconstructWarnings).toHaveLength(1);
    await host.command("/pruner status");
    expect(host.notices.at(-1)!.message).toMatch(/warning: entry .*context-prune-index entry without a toolCalls array/);
  });
});

describe("context handler", () => {
  it("returns the very array pi passed when nothing is archived", async () => {
    const host = await PiHost.start(SessionManager.inMemory(), keepTempDir(tempAgentDir()));
    await playChains(host, new MessageClock(), ["c1", "c2", "c3"]);
    const { input, output } = await host.context();
    expect(output).toBe(input);
  });

  it("returns the very array when chainpress is off, even with compressed chains", async () => {
    const agentDir = keepTempDir(tempAgentDir());
    const host = await PiHost.start(SessionManager.inMemory(), agentDir);
    await playChains(host, new MessageClock(), ["c1", "c2", "c3", "c4"]);
    expect((await host.context()).output).not.toBe((await host.context()).input);
    await host.command("/pruner off");
    const { input, output } = await host.context();
    expect(output).toBe(input);
  });

  it("renders compressed chains, and rendering its own output changes nothing", async () => {
    const host = await PiHost.start(SessionManager.inMemory(), keepTempDir(tempAgentDir()));
    await playChains(host, new MessageClock(), ["c1", "c2", "c3", "c4"]);
    const { input, output } = await host.context();
    expect(output).not.toBe(input);
    expect(output.length).toBe(input.length - 1); // call + result dropped, synthetic message added
    const again = await host.context(output as never);
    expect(again.output).toBe(output);
  });

  it("keeps pi's messages and reports when rendering throws", async () => {
    const host = await PiHost.start(SessionManager.inMemory(), keepTempDir(tempAgentDir()));
    await playChains(host, new MessageClock(), ["c1", "c2", "c3", "c4"]);
    Object.defineProperty(host.runtime.holder, "state", { get: () => { throw new Error("state exploded"); } });
    const { input, output } = await host.context();
    expect(output).toBe(input);
    expect(host.notices.at(-1)).toEqual({ message: "pruner: context rendering failed: state exploded", level: "warning" });
    expect(host.runtime.holder.errors).toEqual(["pruner: context rendering failed: state exploded"]);
  });
});
