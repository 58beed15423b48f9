// The live policy's defaults (issue 47), replayed on the real sessions in fixtures/: the targets
// they were chosen for, under both cache lifetimes, and against the policy they replaced (the
// flush at each reply with a window of 3). `npm run bench:policy` prints the whole comparison.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CACHE_TTL_1H_MS, CACHE_TTL_5M_MS } from "../src/core/replay/cache-model.js";
import { replay } from "../src/core/replay/replay.js";
import { DEFAULT_SETTINGS, type ChainpressSettings } from "../src/core/settings.js";
import { chainpressLive } from "../src/main/live-replay-source.js";
import { loadReplaySession, type LoadedReplay } from "../src/main/replay-session.js";

const dir = path.join(import.meta.dirname, "..", "fixtures", "real-pi-sessions");
const files = fs.readdirSync(dir).filter((file) => file.endsWith(".jsonl")).sort();

function withTtl(settings: ChainpressSettings, ttlMs: number): ChainpressSettings {
  return { ...settings, chainCompression: { ...settings.chainCompression, cacheTtlSeconds: ttlMs / 1000 } };
}

const EACH_REPLY_WINDOW_3: ChainpressSettings = { ...DEFAULT_SETTINGS, chainCompression: { ...DEFAULT_SETTINGS.chainCompression, trigger: "each-reply", rollingWindow: 3 } };

interface Outcome {
  savings: number[];
  total: number;
  compressions: number;
  paidBack: number;
}

function outcome(sessions: LoadedReplay[], settings: ChainpressSettings, ttlMs: number): Outcome {
  let asRunTotal = 0;
  let liveTotal = 0;
  const result: Outcome = { savings: [], total: 0, compressions: 0, paidBack: 0 };
  for (const session of sessions) {
    const asRun = replay(session, { kind: "as-run" }, { cacheTtlMs: ttlMs }).totals.cost.total;
    const live = replay(session, { kind: "source", source: chainpressLive(withTtl(settings, ttlMs)) }, { cacheTtlMs: ttlMs });
    result.savings.push(1 - live.totals.cost.total / asRun);
    result.compressions += live.compressions.length;
    result.paidBack += live.compressions.filter((c) => c.paidBack).length;
    asRunTotal += asRun;
    liveTotal += live.totals.cost.total;
  }
  result.total = 1 - liveTotal / asRunTotal;
  return result;
}

const median = (values: number[]) => {
  const s = [...values].sort((a, b) => a - b);
  return (s[(s.length - 1) >> 1]! + s[s.length >> 1]!) / 2;
};

describe("the live policy's defaults on the real sessions", async () => {
  const sessions = await Promise.all(files.map((file) => loadReplaySession(path.join(dir, file))));

  it("5-minute cache: the median bill at least 45% below as run, none above it, 90% of compressions paid back, better than the flush at each reply", () => {
    const chosen = outcome(sessions, DEFAULT_SETTINGS, CACHE_TTL_5M_MS);
    const before = outcome(sessions, EACH_REPLY_WINDOW_3, CACHE_TTL_5M_MS);
    console.log(`5m: savings ${chosen.savings.map((s) => (100 * s).toFixed(1)).join("/")}%, median ${(100 * median(chosen.savings)).toFixed(1)}% (each reply, window 3: ${(100 * median(before.savings)).toFixed(1)}%), ${chosen.paidBack}/${chosen.compressions} paid back`);
    expect(median(chosen.savings)).toBeGreaterThanOrEqual(0.45);
    expect(Math.min(...chosen.savings)).toBeGreaterThan(0);
    expect(chosen.paidBack / chosen.compressions).toBeGreaterThanOrEqual(0.9);
    expect(chosen.total).toBeGreaterThan(before.total);
    expect(median(chosen.savings)).toBeGreaterThan(median(before.savings));
  });

  it("1-hour cache: none above as run, 90% of compressions paid back, better than the flush at each reply", () => {
    const chosen = outcome(sessions, DEFAULT_SETTINGS, CACHE_TTL_1H_MS);
    const before = outcome(sessions, EACH_REPLY_WINDOW_3, CACHE_TTL_1H_MS);
    console.log(`1h: savings ${chosen.savings.map((s) => (100 * s).toFixed(1)).join("/")}%, median ${(100 * median(chosen.savings)).toFixed(1)}% (each reply, window 3: ${(100 * median(before.savings)).toFixed(1)}%), ${chosen.paidBack}/${chosen.compressions} paid back`);
    expect(Math.min(...chosen.savings)).toBeGreaterThan(0);
    expect(chosen.paidBack / chosen.compressions).toBeGreaterThanOrEqual(0.9);
    expect(chosen.total).toBeGreaterThan(before.total);
  });
});
