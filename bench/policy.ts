/**
 * `npm run bench:policy`: the live policies of issue 47 compared on the cost replay, over the real
 * sessions in `fixtures/real-pi-sessions/`, under a 5-minute and a 1-hour cache. Each row is a
 * trigger (core/flush-trigger.ts) with a rolling window and open-chain numbers; the columns give
 * the saving against as run on each session, the median and the total, the compressions that paid
 * back, and the sessions billed above as run. Rows are sorted by total saving; the defaults' row
 * is marked. `--grid small` (the default) or `--grid full`.
 */

import fs from "node:fs";
import path from "node:path";
import { replay, type ReplayResult } from "../src/core/replay/replay.js";
import { CACHE_TTL_1H_MS, CACHE_TTL_5M_MS } from "../src/core/replay/cache-model.js";
import { DEFAULT_SETTINGS, type ChainpressSettings } from "../src/core/settings.js";
import type { FlushTriggerName } from "../src/core/flush-trigger.js";
import { chainpressLive } from "../src/main/live-replay-source.js";
import { loadReplaySession, type LoadedReplay } from "../src/main/replay-session.js";
import { repoRoot } from "./fixtures/fixture-cache.js";
import { markdownTable } from "./lib/table.js";

interface Candidate {
  name: string;
  trigger: FlushTriggerName;
  paybackRequests?: number;
  pressurePercent?: number;
  rollingWindow: number;
  open: { enabled: boolean; triggerTokens?: number; keepRecent?: number; minReclaimTokens?: number };
}

function settingsOf(c: Candidate, ttlMs: number): ChainpressSettings {
  const base = structuredClone(DEFAULT_SETTINGS);
  base.chainCompression.trigger = c.trigger;
  if (c.paybackRequests !== undefined) base.chainCompression.paybackRequests = c.paybackRequests;
  if (c.pressurePercent !== undefined) base.chainCompression.pressurePercent = c.pressurePercent;
  base.chainCompression.rollingWindow = c.rollingWindow;
  base.chainCompression.cacheTtlSeconds = ttlMs / 1000;
  base.openChains = { ...base.openChains, ...c.open };
  return base;
}

function isDefault(c: Candidate): boolean {
  const d = DEFAULT_SETTINGS;
  const cc = d.chainCompression;
  const o = d.openChains;
  return c.trigger === cc.trigger && (c.paybackRequests ?? cc.paybackRequests) === cc.paybackRequests && (c.pressurePercent ?? cc.pressurePercent) === cc.pressurePercent &&
    c.rollingWindow === cc.rollingWindow && c.open.enabled === o.enabled && (c.open.triggerTokens ?? o.triggerTokens) === o.triggerTokens &&
    (c.open.keepRecent ?? o.keepRecent) === o.keepRecent && (c.open.minReclaimTokens ?? o.minReclaimTokens) === o.minReclaimTokens;
}

function candidates(grid: string): Candidate[] {
  const triggers: Omit<Candidate, "rollingWindow" | "open" | "name">[] = [
    { trigger: "each-reply" },
    { trigger: "cold-cache" },
    { trigger: "pressure", pressurePercent: 50 },
    { trigger: "pressure", pressurePercent: 80 },
    ...[10, 20, 30, 50].map((n) => ({ trigger: "when-it-pays" as const, paybackRequests: n })),
  ];
  const windows = [1, 2, 3];
  const opens: Candidate["open"][] = grid === "full"
    ? [{ enabled: true }, { enabled: false }, { enabled: true, triggerTokens: 20_000, minReclaimTokens: 10_000 }, { enabled: true, keepRecent: 5 }, { enabled: true, triggerTokens: 80_000, minReclaimTokens: 40_000 }]
    : [{ enabled: true }];
  const out: Candidate[] = [];
  for (const t of triggers) for (const rollingWindow of windows) for (const open of opens) {
    const trig = t.trigger === "when-it-pays" ? `pays/${t.paybackRequests}` : t.trigger === "pressure" ? `pressure/${t.pressurePercent}%` : t.trigger;
    const o = !open.enabled ? "off" : `${(open.triggerTokens ?? 40_000) / 1000}k/${open.keepRecent ?? 10}/${(open.minReclaimTokens ?? 20_000) / 1000}k`;
    out.push({ name: `${trig} w${rollingWindow} open ${o}`, ...t, rollingWindow, open });
  }
  return out;
}

const pct = (v: number) => `${(v * 100).toFixed(1)}%`;

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

async function main(): Promise<void> {
  const grid = process.argv.includes("--grid") ? process.argv[process.argv.indexOf("--grid") + 1]! : "small";
  const folder = path.join(repoRoot(), "fixtures", "real-pi-sessions");
  const files = fs.readdirSync(folder).filter((f) => f.endsWith(".jsonl")).sort();
  const sessions: LoadedReplay[] = [];
  for (const f of files) sessions.push(await loadReplaySession(path.join(folder, f)));
  for (const [label, ttlMs] of [["5-minute", CACHE_TTL_5M_MS], ["1-hour", CACHE_TTL_1H_MS]] as const) {
    const asRun = sessions.map((s) => replay(s, { kind: "as-run" }, { cacheTtlMs: ttlMs }).totals.cost.total);
    const rows: { row: string[]; total: number }[] = [];
    for (const c of candidates(grid)) {
      const results: ReplayResult[] = sessions.map((s) => replay(s, { kind: "source", source: chainpressLive(settingsOf(c, ttlMs)) }, { cacheTtlMs: ttlMs }));
      const savings = results.map((r, i) => (asRun[i]! - r.totals.cost.total) / asRun[i]!);
      const total = 1 - results.reduce((sum, r) => sum + r.totals.cost.total, 0) / asRun.reduce((a, b) => a + b, 0);
      const events = results.flatMap((r) => r.compressions);
      const paid = events.filter((e) => e.paidBack).length;
      const above = savings.filter((s) => s < 0).length;
      rows.push({ total, row: [c.name + (isDefault(c) ? " (default)" : ""), ...savings.map(pct), pct(median(savings)), pct(total), `${paid}/${events.length}`, String(above)] });
    }
    rows.sort((a, b) => b.total - a.total);
    console.log(`\n${label} cache\n`);
    console.log(markdownTable(["policy", ...files.map((f) => f.replace(".jsonl", "")), "median", "total", "paid back", "above as run"], rows.map((r) => r.row)));
  }
}

await main();
