/**
 * The first term of a run's floor: starting and ending a `node` process that does nothing. The
 * fastest of a few, as a yardstick of this machine at this moment.
 */

import { spawnSync } from "node:child_process";
import { performance } from "node:perf_hooks";

const STARTS = 5;

export function measureNodeStartMs(): number {
  let fastest = Number.POSITIVE_INFINITY;
  for (let i = 0; i < STARTS; i++) {
    const start = performance.now();
    const run = spawnSync(process.execPath, ["-e", "0"], { stdio: "ignore" });
    if (run.status !== 0) throw new Error(`node -e 0 exited with ${run.status ?? run.signal}`);
    fastest = Math.min(fastest, performance.now() - start);
  }
  return fastest;
}
