// `npm run test:stress`: the crash, fault, fuzz, integrity and concurrency suites at full size
// (every n of every kill point, 10,000 fuzz cases by default: CHAINPRESS_FUZZ_RUNS overrides),
// then a summary of the figures. CI can run a bounded slice with e.g.
// `CHAINPRESS_FUZZ_RUNS=3000 npm run test:stress -- -t "one n per point|fuzz"`.
import os from "node:os";
import path from "node:path";
import { defineConfig } from "vitest/config";

process.env.CHAINPRESS_STRESS = "1";
process.env.CHAINPRESS_STRESS_FIGURES ??= path.join(os.tmpdir(), `chainpress-stress-figures-${process.pid}.jsonl`);
process.env.CHAINPRESS_FUZZ_RUNS ??= "10000";

export default defineConfig({
  test: {
    include: ["test/{crash,fault,fuzz,integrity,concurrency}-*.test.ts"],
    globalSetup: ["test/helpers/stress-global-setup.ts"],
    env: {
      CHAINPRESS_STRESS: "1",
      CHAINPRESS_STRESS_FIGURES: process.env.CHAINPRESS_STRESS_FIGURES,
      CHAINPRESS_FUZZ_RUNS: process.env.CHAINPRESS_FUZZ_RUNS,
    },
    testTimeout: 1_800_000,
    hookTimeout: 300_000,
    pool: "forks",
    // The suites spawn many processes each; on a small machine one file at a time is faster.
    fileParallelism: false,
  },
});
