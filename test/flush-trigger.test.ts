/**
 * The live flush's triggers (core/flush-trigger.ts) on hand-computed moments: the payback
 * arithmetic, the cold cache, and the pressure threshold.
 */

import { describe, expect, it } from "vitest";
import { DEFAULT_CACHE_PRICE_RATIOS, flushNow, paysWithin, type FlushMoment } from "../src/core/flush-trigger.js";
import { DEFAULT_SETTINGS, flushTriggerOf, mergeSettings } from "../src/core/settings.js";

/** 1,000 tokens saved per request; 5,000 written again; Anthropic's 5-minute ratios. */
const warm: FlushMoment = { cacheCold: false, savedTokens: 1000, rewriteTokens: 5000, contextTokens: 50_000, compactAtTokens: 183_616, prices: DEFAULT_CACHE_PRICE_RATIOS };

describe("flush triggers", () => {
  it("pays back once the saved reads exceed the rewrite's extra: 5,000 × 1.25 − 6,000 × 0.1 = 5,650 against 100 per request", () => {
    expect(paysWithin(56, warm)).toBe(false);
    expect(paysWithin(57, warm)).toBe(true);
    expect(flushNow({ kind: "when-it-pays", paybackRequests: 56, pressureShare: 0.8 }, warm)).toBe(false);
    expect(flushNow({ kind: "when-it-pays", paybackRequests: 57, pressureShare: 0.8 }, warm)).toBe(true);
  });

  it("costs nothing extra on a cold cache: everything is written anyway, and less of it", () => {
    const cold = { ...warm, cacheCold: true };
    expect(paysWithin(0, cold)).toBe(true);
    expect(flushNow({ kind: "cold-cache", pressureShare: 0.8 }, warm)).toBe(false);
    expect(flushNow({ kind: "cold-cache", pressureShare: 0.8 }, cold)).toBe(true);
  });

  it("compresses under pressure: the context at 80% of pi's compaction threshold (200k − 16,384)", () => {
    const share = 0.8;
    const at = Math.ceil(share * warm.compactAtTokens);
    expect(flushNow({ kind: "pressure", pressureShare: share }, { ...warm, contextTokens: at - 1 })).toBe(false);
    expect(flushNow({ kind: "pressure", pressureShare: share }, { ...warm, contextTokens: at })).toBe(true);
    expect(flushNow({ kind: "when-it-pays", paybackRequests: 0, pressureShare: share }, { ...warm, contextTokens: at })).toBe(true);
  });

  it("never flushes what saves nothing, except at each reply (where the planner's would-grow check decides)", () => {
    const nothing = { ...warm, savedTokens: 0, cacheCold: true, contextTokens: 1e9 };
    expect(flushNow({ kind: "each-reply" }, nothing)).toBe(true);
    for (const trigger of [{ kind: "when-it-pays", paybackRequests: 1000, pressureShare: 0.1 }, { kind: "cold-cache", pressureShare: 0.1 }, { kind: "pressure", pressureShare: 0.1 }] as const) {
      expect(flushNow(trigger, nothing)).toBe(false);
    }
  });

  it("reads the trigger from the settings, and refuses a name it does not know", () => {
    expect(flushTriggerOf(DEFAULT_SETTINGS.chainCompression)).toEqual({ kind: "when-it-pays", paybackRequests: 20, pressureShare: 0.8 });
    const { settings, warnings } = mergeSettings({ chainCompression: { trigger: "sometimes", paybackRequests: 7 } });
    expect(settings.chainCompression.trigger).toBe("when-it-pays");
    expect(settings.chainCompression.paybackRequests).toBe(7);
    expect(warnings).toEqual(['chainpress.chainCompression.trigger: expected one of each-reply, when-it-pays, cold-cache, pressure, got the string "sometimes"; default "when-it-pays" kept']);
    expect(mergeSettings({ chainCompression: { trigger: "cold-cache" } }).settings.chainCompression.trigger).toBe("cold-cache");
  });
});
