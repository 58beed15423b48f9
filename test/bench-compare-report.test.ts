// bench:compare's summary (bench/lib/compare-report.ts) of chainpress's phases: the time before
// the compaction (the process's wall minus the report's) and each phase of the report, as medians
// over the rounds; upstream, which reports no phases, has none.

import { describe, expect, it } from "vitest";
import type { Contender, Sample } from "../bench/lib/contenders.js";
import { phaseTable, summarizeFixture } from "../bench/lib/compare-report.js";

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
