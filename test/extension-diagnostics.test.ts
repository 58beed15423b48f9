// Issue 11 item 9: a diagnostic the extension cannot persist is shown in `/pruner status`, once
// per diagnostic however often rendering re-reports it, instead of being swallowed.
import fs from "node:fs";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { afterEach, describe, expect, it } from "vitest";
import { PiHost, tempAgentDir } from "./helpers/pi-host.js";
import { chainMessages, MessageClock } from "./helpers/pi-session.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

describe("diagnostics the extension cannot persist", () => {
  it("are counted once per diagnostic and shown by /pruner status", async () => {
    const agentDir = tempAgentDir();
    dirs.push(agentDir);
    const host = await PiHost.start(SessionManager.inMemory(), agentDir);
    const clock = new MessageClock();
    for (const label of ["c1", "c2"]) {
      for (const message of chainMessages(clock, label, [`${label} output`])) await host.message(message);
      await host.endRun();
      await host.idle();
    }
    // A chain entry whose closing reply is nowhere: every render reports it as unresolved.
    const start = (chainMessages(new MessageClock(), "c1", ["x"])[0] as { timestamp: number }).timestamp;
    host.sessionManager.appendCustomEntry("context-prune-chain", { blockId: "b7", startUserTimestamp: start, droppedToolCallIds: [], finalAssistantTimestamp: 1, toolRefs: [], compressedAt: 1 });
    await host.emit("session_tree", { type: "session_tree", newLeafId: null, oldLeafId: null });
    expect(host.runtime.holder.state.chains.size).toBe(1);

    host.failAppends = 1_000; // the disk is full
    for (let i = 0; i < 5; i++) {
      await host.context();
      await host.runtime.holder.report([]);
    }
    expect(host.runtime.holder.diagnostics.failures).toHaveLength(1);
    expect(host.runtime.holder.diagnostics.failedAppends).toBe(5);
    await host.command("/pruner status");
    const report = host.notices.at(-1)!.message;
    expect(report).toMatch(/^diagnostics not persisted: 1 \(5 failed appends\), last: diagnostic unresolved-range:b7 not persisted: injected append failure$/m);

    // Once the disk has room again the next render writes it, and the line goes away.
    host.failAppends = 0;
    await host.context();
    await host.runtime.holder.report([]);
    expect(host.customEntries("context-prune-diagnostic").map((e) => e.data.kind)).toEqual(["unresolved-range"]);
    await host.command("/pruner status");
    expect(host.notices.at(-1)!.message).not.toMatch(/not persisted/);
  });
});
