// The pool terminates a thread only once the worker module has loaded in it (main/pool-boot.ts):
// Node 20 aborts the whole process when a thread is terminated while require() instantiates an ES
// module. Before, a CLI run refused early (an existing --out, a held lock) aborted now and then.

import { spawn } from "node:child_process";
import path from "node:path";
import { Piscina } from "piscina";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { PoolBoot } from "../src/main/pool-boot.js";
import { workerFile } from "../src/main/worker-pool.js";
import { ensureBuilt } from "./helpers/cli-harness.js";
import { REPO_ROOT } from "./helpers/fixture-paths.js";

const helper = (name: string) => path.join(REPO_ROOT, "test", "helpers", name);
const pools: Piscina[] = [];

function pool(filename: string, threads: number, workerData?: unknown): Piscina {
  const made = new Piscina({ filename, minThreads: threads, maxThreads: threads, workerData });
  pools.push(made);
  return made;
}

/** Runs `node script args`; resolves with its exit status, signal and stdout. */
function run(script: string, args: string[]): Promise<{ status: number | null; signal: string | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], { cwd: REPO_ROOT });
    let out = "";
    let err = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
    child.on("error", reject);
    child.on("close", (status, signal) => resolve({ status, signal, out, err }));
  });
}

beforeAll(() => ensureBuilt());
afterEach(async () => {
  await Promise.all(pools.splice(0).map((made) => made.destroy()));
});

describe("a pool's threads are terminated only once loaded", () => {
  it("the real worker module says so as it loads: settled() resolves, long before its bound", async () => {
    const made = pool(workerFile(), 2);
    // A bound past the test's timeout: if the module never said so, this test would time out.
    await new PoolBoot(made, 120_000).settled();
    expect(made.threads).toHaveLength(2);
  });

  it("settled() waits for a thread that loads late", async () => {
    const lateMs = 400;
    const made = pool(helper("late-loading-worker.mjs"), 2, { lateMs });
    const boot = new PoolBoot(made, 120_000);
    const started = performance.now();
    await boot.settled();
    expect(performance.now() - started).toBeGreaterThanOrEqual(lateMs - 50);
    expect(await made.run(7)).toBe(7);
  });

  it("settled() gives up on a thread that never says it has loaded, after its bound", async () => {
    const made = pool(helper("silent-worker.mjs"), 1);
    await new PoolBoot(made, 300).settled();
    expect(await made.run(3)).toBe(3);
  });

  it("pools started and closed at every moment of their threads' loading never abort the process", async () => {
    // Four processes at once: the abort needed a busy machine (a few runs in a hundred).
    const runs = await Promise.all([0, 1, 2, 3].map(() => run(helper("pool-churn.mjs"), ["40"])));
    for (const result of runs) {
      expect({ status: result.status, signal: result.signal, err: result.err }).toEqual({ status: 0, signal: null, err: "" });
      expect(result.out).toBe("ok\n");
    }
  });
});
