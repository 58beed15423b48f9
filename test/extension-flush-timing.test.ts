/**
 * The live flush's timing (extension/flush-timing.ts) on pi's real SessionManager: under
 * `when-it-pays`, a compression that would not pay back while the cache is warm waits; once the
 * cache lifetime has passed with no request, the timer compresses; a request before then cancels
 * the timer, and the next reply decides again.
 */

import fs from "node:fs";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { afterEach, describe, expect, it } from "vitest";
import { PiHost, tempAgentDir } from "./helpers/pi-host.js";
import { chainMessages, MessageClock } from "./helpers/pi-session.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** A cache that lives one second; `paybackRequests` 0: a warm-cache compression never pays. */
function host(paybackRequests: number): Promise<PiHost> {
  const dir = tempAgentDir({ workers: 0, chainCompression: { trigger: "when-it-pays", rollingWindow: 1, paybackRequests, cacheTtlSeconds: 1 } });
  dirs.push(dir);
  return PiHost.start(SessionManager.inMemory(), dir);
}

/** A closed chain, each model turn preceded by its request (pi's `context` event). */
async function playChain(pi: PiHost, clock: MessageClock, label: string): Promise<void> {
  for (const message of chainMessages(clock, label, [`${label} output `.repeat(400)])) {
    if ((message as { role: string }).role === "assistant") await pi.context();
    await pi.message(message);
  }
  await pi.endRun();
  await pi.idle();
}

const chainEntries = (pi: PiHost) => pi.customEntries("context-prune-chain").map((e) => e.data.blockId);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("live flush timing", () => {
  it("waits while the cache is warm, and compresses once it has expired", async () => {
    const pi = await host(0);
    const clock = new MessageClock();
    await playChain(pi, clock, "c1");
    await playChain(pi, clock, "c2");
    // c1 is past the window of 1, but rewriting the warm cache would never pay back.
    expect(chainEntries(pi)).toEqual([]);
    expect(pi.runtime.coldFlushTimer).toBeDefined();
    await sleep(1300);
    await pi.idle();
    expect(chainEntries(pi)).toEqual(["b1"]);
    expect(pi.runtime.coldFlushTimer).toBeUndefined();
  });

  it("a request before the cache expires cancels the timer; the next reply decides again", async () => {
    const pi = await host(0);
    const clock = new MessageClock();
    await playChain(pi, clock, "c1");
    await playChain(pi, clock, "c2");
    expect(pi.runtime.coldFlushTimer).toBeDefined();
    await pi.context();
    expect(pi.runtime.coldFlushTimer).toBeUndefined();
    await sleep(1300);
    await pi.idle();
    expect(chainEntries(pi)).toEqual([]);
    // The next chain's requests warm the cache again: its reply waits too, and its timer
    // compresses both chains now past the window.
    await playChain(pi, clock, "c3");
    expect(chainEntries(pi)).toEqual([]);
    await sleep(1300);
    await pi.idle();
    expect(chainEntries(pi)).toEqual(["b1", "b2"]);
  });

  it("compresses as the reply ends when the saving pays back within the horizon", async () => {
    const pi = await host(1000);
    const clock = new MessageClock();
    await playChain(pi, clock, "c1");
    await playChain(pi, clock, "c2");
    expect(chainEntries(pi)).toEqual(["b1"]);
    expect(pi.runtime.coldFlushTimer).toBeUndefined();
  });
});
