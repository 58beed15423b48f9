// Worker threads, and in the chainpress executable V8's own threads, run below the main thread's
// priority, so the main thread (pi's UI, the commit loop) is not kept waiting for a core by them
// (io/thread-priority.ts). Linux gives each thread its own nice value; elsewhere both are no-ops.

import { spawnSync } from "node:child_process";
import { once } from "node:events";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import { LOWERED_NICE_STEPS } from "../src/io/thread-priority.js";
import { REPO_ROOT } from "./helpers/fixture-paths.js";
import { scanScratch } from "./helpers/scan-scratch.js";
import { ensureBuilt } from "./helpers/cli-harness.js";

const { runner, writeTemp } = scanScratch("chainpress-priority-");
const linux = process.platform === "linux";

/** Nice value of each thread of this process, by thread id (field 19 of /proc/.../stat). */
function threadNices(): Map<number, number> {
  const nices = new Map<number, number>();
  for (const name of fs.readdirSync("/proc/self/task")) {
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/self/task/${name}/stat`, "utf8");
    } catch {
      continue; // the thread ended between the listing and the read
    }
    nices.set(Number(name), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16]));
  }
  return nices;
}


/** The built thread-priority module, for code that runs outside vitest's transform (a raw worker, a child process). */
function builtModule(): string {
  ensureBuilt();
  return pathToFileURL(path.join(REPO_ROOT, "dist", "src", "io", "thread-priority.js")).href;
}

describe("thread priorities", () => {
  it("a thread that lowers itself runs LOWERED_NICE_STEPS below its creator, which keeps its own", async () => {
    const base = os.getPriority();
    const script = `
      import os from "node:os";
      import { parentPort } from "node:worker_threads";
      import { lowerThisThreadsPriority } from ${JSON.stringify(builtModule())};
      const returned = lowerThisThreadsPriority();
      parentPort.postMessage({ returned: returned ?? null, now: os.getPriority() });`;
    const worker = new Worker(new URL(`data:text/javascript,${encodeURIComponent(script)}`));
    const [answer] = (await once(worker, "message")) as [{ returned: number | null; now: number }];
    await worker.terminate();
    expect(os.getPriority()).toBe(base);
    if (!linux) return expect(answer.returned).toBeNull();
    expect(answer.returned).toBe(Math.min(19, base + LOWERED_NICE_STEPS));
    expect(answer.now).toBe(answer.returned);
  });

  it("a pool's worker is lowered by the time it has run a task", async () => {
    const lowered = Math.min(19, os.getPriority() + LOWERED_NICE_STEPS);
    const count = () => (linux ? [...threadNices().values()].filter((nice) => nice === lowered).length : 0);
    const before = count();
    const pool = runner(1);
    const file = writeTemp('{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}\n');
    // The worker module lowers its thread when it loads, so a finished task means a lowered thread.
    await pool.scan({ kind: "scan-shard", file, start: 0, end: fs.statSync(file).size, maxLineBytes: 1 << 20 });
    if (!linux) return;
    expect(count() - before).toBeGreaterThanOrEqual(1);
    expect(threadNices().get(process.pid)).toBe(os.getPriority());
  });

  it("the executable's other threads are lowered, its main thread is not", () => {
    const module = builtModule();
    const script = `
      import fs from "node:fs";
      import { lowerOtherThreadsPriority } from ${JSON.stringify(module)};
      const lowered = lowerOtherThreadsPriority();
      const nices = fs.readdirSync("/proc/self/task").map((t) => {
        const stat = fs.readFileSync("/proc/self/task/" + t + "/stat", "utf8");
        return [Number(t), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16])];
      });
      console.log(JSON.stringify({ pid: process.pid, lowered, nices }));`;
    const result = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
    expect(result.stderr).toBe("");
    const { pid, lowered, nices } = JSON.parse(result.stdout) as { pid: number; lowered: number; nices: Array<[number, number]> };
    if (!linux) return expect(lowered).toBe(0);
    const base = new Map(nices).get(pid)!;
    const others = nices.filter(([tid]) => tid !== pid);
    // V8's platform threads at least, started before any script runs.
    expect(others.length).toBeGreaterThan(0);
    expect(lowered).toBe(others.length);
    for (const [, nice] of others) expect(nice).toBe(Math.min(19, base + LOWERED_NICE_STEPS));
  });
});
