/**
 * The extension walks pi's active branch itself (extension/state-holder.ts `branchEntries`), in
 * linear time and in slices, on pi's REAL SessionManager: it must give what pi's own getBranch()
 * gives, on a branched tree too, and end on a corrupt cycle of parent links.
 */

import { SessionManager } from "@mariozechner/pi-coding-agent";
import { describe, expect, it } from "vitest";
import type { SessionView } from "../src/extension/session-view.js";
import { branchEntries, branchEntriesSteps } from "../src/extension/state-holder.js";
import { chainMessages, MessageClock } from "./helpers/pi-session.js";

type Message = Parameters<SessionManager["appendMessage"]>[0];

function sessionWith(chains: number): { sm: SessionManager; ids: string[] } {
  const sm = SessionManager.inMemory();
  const clock = new MessageClock();
  const ids: string[] = [];
  for (let c = 0; c < chains; c++) {
    for (const message of chainMessages(clock, `c${c}`, [`out ${c}`, `more ${c}`])) ids.push(sm.appendMessage(message as Message));
  }
  return { sm, ids };
}

const idsOf = (entries: ReadonlyArray<{ id: string }>) => entries.map((entry) => entry.id);

/** The walk run step by step, failing instead of hanging when it does not end. */
function walkAtMost(sm: SessionManager, steps: number) {
  const walk = branchEntriesSteps(sm as unknown as SessionView);
  for (let i = 0; i < steps; i++) {
    const next = walk.next();
    if (next.done) return next.value;
  }
  throw new Error(`the walk did not end within ${steps} steps`);
}

describe("branchEntries", () => {
  it("is pi's getBranch(), on a long branch and after moving the leaf to an older entry", () => {
    // Over 256 entries: the walk pauses (core/steps.ts) and goes on.
    const { sm, ids } = sessionWith(60);
    expect(ids.length).toBeGreaterThan(300);
    expect(idsOf(branchEntries(sm as unknown as SessionView))).toEqual(idsOf(sm.getBranch()));
    sm.branch(ids[100]!);
    sm.appendMessage(chainMessages(new MessageClock(2_000_000_000_000), "side", ["side out"])[0] as Message);
    const branch = branchEntries(sm as unknown as SessionView);
    expect(idsOf(branch)).toEqual(idsOf(sm.getBranch()));
    expect(branch).toHaveLength(102);
  });

  it("ends on a cycle of parent links, with every entry of the walk in it", () => {
    for (const [length, into] of [
      [1, 0],
      [2, 0],
      [9, 4],
      [40, 39],
      [40, 0],
      [300, 17],
    ] as const) {
      const { sm, ids } = sessionWith(Math.ceil(length / 6) + 1);
      const chain = ids.slice(0, length);
      sm.branch(chain.at(-1)!);
      // Corrupt: the oldest entry's parent becomes an entry at `into` (itself when 0), a cycle.
      const root = sm.getEntry(chain[0]!)! as { parentId: string | null };
      root.parentId = chain[into]!;
      const walked = idsOf(walkAtMost(sm, 1000));
      expect(new Set(walked)).toEqual(new Set(chain));
      expect(walked.length).toBeLessThanOrEqual(3 * length);
    }
  });
});
