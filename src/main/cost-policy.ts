/**
 * The chainpress-live policy `chainpress cost` replays against as run. The replay engine
 * (core/replay) does not define one yet, so this answers with the reason; the command then says
 * "not available" and reports no chainpress figure. When the engine gains it, this is the one
 * place that builds it from the command's settings.
 */

import type { ReplayPolicy } from "../core/replay/policy.js";

/** The settings a chainpress-live policy takes, as `compact` takes them. */
export interface LivePolicySettings {
  rollingWindow: number;
  protectedTools: readonly string[];
  protectedPaths: readonly string[];
  spillThreshold: number;
  openChains: boolean;
}

export const LIVE_POLICY_MISSING = "not available: the replay engine has no chainpress-live policy yet";

export function chainpressLivePolicy(_settings: LivePolicySettings): ReplayPolicy | { note: string } {
  return { note: LIVE_POLICY_MISSING };
}
