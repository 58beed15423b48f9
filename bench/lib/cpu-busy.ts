/**
 * How busy the machine's CPUs are right now (Linux /proc/stat), sampled while this process
 * sleeps: work of other users skews every timing, so each case records it.
 */

import fs from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";

interface CpuTimes {
  busy: number;
  total: number;
}

function readCpuTimes(): CpuTimes | undefined {
  try {
    const line = fs.readFileSync("/proc/stat", "utf8").split("\n")[0]!;
    const fields = line.trim().split(/\s+/).slice(1).map(Number);
    const idle = (fields[3] ?? 0) + (fields[4] ?? 0);
    const total = fields.reduce((a, b) => a + b, 0);
    return { busy: total - idle, total };
  } catch {
    return undefined;
  }
}

/** Fraction (0..1) of all CPU time that was busy during the next `ms`; NaN where unknown. */
export async function cpuBusyFraction(ms = 500): Promise<number> {
  const before = readCpuTimes();
  await sleep(ms);
  const after = readCpuTimes();
  if (!before || !after || after.total === before.total) return Number.NaN;
  return (after.busy - before.busy) / (after.total - before.total);
}

/** Wait (up to `maxWaitMs`) until other work leaves the CPUs mostly idle; returns the last sample. */
export async function waitForQuiet(threshold: number, maxWaitMs: number): Promise<number> {
  const deadline = Date.now() + maxWaitMs;
  let busy = await cpuBusyFraction();
  while (!(busy <= threshold) && Date.now() < deadline) busy = await cpuBusyFraction(1000);
  return busy;
}
