/**
 * One session's `chainpress cost`: read (read-only; malformed lines and an incomplete last line left
 * out as pi's loader does, each reported as a warning naming its line), prepared once, replayed as run and under the chainpress policy.
 */

import { sessionCost, type SessionCost } from "../core/cost/session-cost.js";
import { prepareReplay, replay, type ReplayResult, type ReplaySettings } from "../core/replay/replay.js";
import type { ChainpressSettings } from "../core/settings.js";
import { walkBranch } from "../core/session-tree.js";
import { readSession } from "../io/read-session.js";
import type { SessionWarningCode } from "../io/session-errors.js";
import { chainpressLivePolicy, type LivePolicySettings } from "./cost-policy.js";

/** Warnings about lines the replay does not see; the others (glued entries, kept as pi keeps them) change nothing here. */
const LEFT_OUT: ReadonlySet<SessionWarningCode> = new Set(["malformed-line", "truncated-last-line"]);

export interface CostRun {
  cost: SessionCost;
  asRun: ReplayResult;
  /** Null when no chainpress policy could be replayed (cost.chainpressNote says why). */
  chainpress: ReplayResult | null;
  /** `file:line: what` for each line left out, and a broken branch walk. */
  warnings: string[];
}

export async function costOfSession(file: string, replaySettings: ReplaySettings, live: LivePolicySettings, base: ChainpressSettings): Promise<CostRun> {
  const loaded = await readSession(file, { malformedLines: "skip" });
  const walk = walkBranch(loaded.entries);
  const warnings = loaded.warnings.filter((w) => LEFT_OUT.has(w.code)).map((w) => w.message);
  if (walk.broken !== null) warnings.push(`${file}: branch ends early: ${walk.broken.reason} at entry ${walk.broken.entryId} (parent ${walk.broken.parentId}); the replay covers the reachable part`);
  const session = prepareReplay(walk.entries);
  const asRun = replay(session, { kind: "as-run" }, replaySettings);
  let chainpress: ReplayResult;
  try {
    chainpress = replay(session, chainpressLivePolicy(live, base), replaySettings);
  } catch (error) {
    // The live policy refuses what the extension's planners refuse; the as-run figures still stand.
    const note = `not available: the chainpress replay failed: ${error instanceof Error ? error.message : String(error)}`;
    return { cost: sessionCost(file, session, asRun, { note }), asRun, chainpress: null, warnings };
  }
  return { cost: sessionCost(file, session, asRun, chainpress), asRun, chainpress, warnings };
}
