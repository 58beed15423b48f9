// bench:compare's summary (bench/lib/compare-report.ts) of chainpress's phases: the time before
// the compaction (the process's wall minus the report's) and each phase of the report, as medians
// over the rounds; upstream, which reports no phases, has none.

import { describe, expect, it } from "vitest";
import type { Contender, Sample } from "../bench/lib/contenders.js";
import { judgeFixture, phaseTable, summarizeFixture } from "../bench/lib/compare-report.js";

function sample(contender: string, round: number, wallMs: number, phases?: [number, number, number, number]): Sample {
  const [scan, untilFirstChain, chains, afterChains] = phases ?? [0, 0, 0, 0];
  return {
    exitCode: 0,
    signal: null,
    wallMs,
    cpuMs: wallMs,
    userMs: wallMs,
    systemMs: 0,
    peakRssBytes: 100e6,
    mainThreadCpuMs: wallMs / 2,
    stderr: "",
    contender,
    round,
    ok: true,
    fileBytes: 40e6,
    compressed: 20,
    appendedBytes: 1,
    appendedEntries: 40,
    spillSizes: [],
    ...(phases ? { reportWallMs: scan + untilFirstChain + chains + afterChains, phaseMs: { scan, untilFirstChain, chains, afterChains } } : {}),
  };
}

describe("bench:compare's phases", () => {
  it("are medians over rounds, the start being the process's wall less the compaction's", () => {
    const contenders: Contender[] = [
      { label: "upstream", kind: "upstream" },
      { label: "workers=2", kind: "chainpress", workers: 2 },
    ];
    const samples = [
      sample("upstream", 0, 1500),
      sample("workers=2", 0, 2000, [900, 150, 700, 100]),
      sample("workers=2", 1, 2300, [1000, 200, 800, 120]),
      sample("workers=2", 2, 2200, [950, 170, 760, 110]),
    ];
    const summary = summarizeFixture("20x1M", { contenders, samples, yardsticks: [{ round: 0, parseCpuMs: 300 }] });
    const ours = summary.contenders.find((c) => c.contender === "workers=2")!;
    expect(ours.startMs).toBe(180); // rounds: 2000 - 1850, 2300 - 2120, 2200 - 1990
    expect(ours.phaseMs).toEqual({ scan: 950, untilFirstChain: 170, chains: 760, afterChains: 110 });
    expect(summary.contenders.find((c) => c.contender === "upstream")!.startMs).toBeNaN();
    const table = phaseTable([summary]);
    expect(table).not.toContain("upstream");
    // (180 + 170 + 110) / 2200, with two decimals.
    expect(table).toMatch(/\| 20x1M +\| workers=2 +\| 2200 +\| 180 +\| 950 +\| 170 +\| 760 +\| 110 +\| 0\.21 +\|/);
  });
});

describe("bench:compare's many-core rows", () => {
  const contenders: Contender[] = [0, 2, 8, 15].map((workers) => ({ label: `workers=${workers}`, kind: "chainpress", workers }));
  // Two rounds; workers=0 over workers=15 is 6.5 in one and 5.5 in the other (median 6).
  const samples = [
    ...[sample("workers=0", 0, 13000), sample("workers=2", 0, 8000), sample("workers=8", 0, 3000), sample("workers=15", 0, 2000)],
    ...[sample("workers=0", 1, 11000), sample("workers=2", 1, 7000), sample("workers=8", 1, 2500), sample("workers=15", 1, 2000)],
  ];
  const rows = (wall15: number) => {
    const adjusted = samples.map((s) => (s.contender === "workers=15" && s.round === 1 ? { ...s, wallMs: wall15 } : s));
    return judgeFixture(summarizeFixture("200x1M", { contenders, samples: adjusted, yardsticks: [{ round: 0, parseCpuMs: 1000 }] }), false);
  };

  it("judge 15 workers against workers=0 at 6x, from the ratios within each round", () => {
    const judged = rows(2000).find((r) => r.target === "workers=0 wall / workers=15 wall >= 6")!;
    expect(judged.measured).toBeCloseTo(6, 9);
    expect(judged.met).toBe(true);
    expect(rows(2100).find((r) => r.target === "workers=0 wall / workers=15 wall >= 6")!.met).toBe(false);
  });

  it("report other pools above two without judging them, and leave two workers to the two-core rows", () => {
    const all = rows(2000);
    const eight = all.find((r) => r.target.startsWith("workers=0 wall / workers=8 wall"))!;
    expect(eight).toMatchObject({ target: "workers=0 wall / workers=8 wall (reported)", met: null });
    expect(eight.measured).toBeCloseTo((13000 / 3000 + 11000 / 2500) / 2, 9);
    expect(all.filter((r) => r.target.startsWith("workers=0 wall / workers=2 wall"))).toHaveLength(1);
  });
});
