/**
 * The chainpress-live policy `chainpress cost` replays against as run: the extension's own flush
 * and open-chain step, simulated (main/live-replay-source.ts), under the command's settings over
 * the settings files'.
 */

import type { FlushTriggerName } from "../core/flush-trigger.js";
import type { ReplayPolicy } from "../core/replay/policy.js";
import type { ChainpressSettings } from "../core/settings.js";
import { chainpressLive } from "./live-replay-source.js";

/** The settings a chainpress-live policy takes, as `compact` takes them (echoed in `--json`). */
export interface LivePolicySettings {
  rollingWindow: number;
  protectedTools: readonly string[];
  protectedPaths: readonly string[];
  spillThreshold: number;
  openChains: boolean;
  trigger: FlushTriggerName;
  paybackRequests: number;
  /** The policy's cache lifetime: the replay's. */
  cacheTtlSeconds: number;
}

export function chainpressLivePolicy(live: LivePolicySettings, base: ChainpressSettings): ReplayPolicy {
  const settings: ChainpressSettings = {
    ...base,
    protectedTools: [...live.protectedTools],
    protectedPaths: [...live.protectedPaths],
    spillThreshold: live.spillThreshold,
    chainCompression: { ...base.chainCompression, rollingWindow: live.rollingWindow, trigger: live.trigger, paybackRequests: live.paybackRequests, cacheTtlSeconds: live.cacheTtlSeconds },
    openChains: { ...base.openChains, enabled: live.openChains },
  };
  return { kind: "source", source: chainpressLive(settings) };
}
