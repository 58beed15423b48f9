/** Parent side of an end-to-end case: spawn a fresh Node process running case-child.js. */

import { execFile } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { CaseRequest, CaseResult } from "./case-types.js";
import { waitForQuiet } from "./cpu-busy.js";

/** The compiled child; under vitest this module runs from bench/, so point at dist/ (built by `npm test`). */
function childFile(): string {
  const here = fileURLToPath(import.meta.url);
  if (here.endsWith(".js")) return path.join(path.dirname(here), "case-child.js");
  return path.resolve(path.dirname(here), "..", "..", "dist", "bench", "lib", "case-child.js");
}

/** Only start a case once other work leaves the CPUs this idle (waiting at most `maxWaitMs`). */
export interface QuietGate {
  threshold: number;
  maxWaitMs: number;
}

export async function runCase(request: CaseRequest, gate: QuietGate = { threshold: 1, maxWaitMs: 0 }): Promise<CaseResult> {
  const cpuBusyBefore = await waitForQuiet(gate.threshold, gate.maxWaitMs);
  const result = await spawnCase(request);
  return { ...result, cpuBusyBefore };
}

function spawnCase(request: CaseRequest): Promise<CaseResult> {
  return new Promise((resolve, reject) => {
    // A 200M-character session needs well over the default old-space limit of small machines.
    const args = ["--max-old-space-size=8192", childFile(), JSON.stringify(request)];
    execFile(process.execPath, args, { maxBuffer: 16 << 20 }, (error, stdout, stderr) => {
      if (error) {
        reject(new Error(`case ${path.basename(request.fixture)} workers=${request.workers} failed: ${stderr || error.message}`));
        return;
      }
      const last = stdout.trim().split("\n").pop() ?? "";
      resolve(JSON.parse(last) as CaseResult);
    });
  });
}
