/**
 * `node --expose-gc --max-semi-space-size=3 dist/bench/heap-phases.js SESSION [workers]`
 * The main thread's live heap after each step of planning a compaction of SESSION (nothing is
 * written): the scan, the model, chain detection, the "before" measure, the span index and every
 * chain's plan. Each step is followed by two full collections, so a row is what that step left
 * alive (and, in brackets, the heap just before collecting: what it allocated on top). What the
 * main thread keeps is what every full collection visits, and the event loop waits for.
 */

import { makeProtectionPredicate } from "../src/core/protection.js";
import { detectChainsSteps } from "../src/core/detect-chains.js";
import { recoveryGraceKeysSteps, selectEligible } from "../src/core/select-eligible.js";
import { SpanIndex } from "../src/core/span-index.js";
import { createChainRunner } from "../src/main/chain-runner.js";
import { DEFAULT_COMPACT_OPTIONS } from "../src/main/compact-options.js";
import { measureContextCooperatively } from "../src/main/context-size.js";
import { driveSteps } from "../src/main/cooperative.js";
import { planChain } from "../src/main/plan-chains.js";
import { scanSession } from "../src/main/scan-session.js";
import { modelOfCooperatively } from "../src/main/session-model.js";

const collect = (globalThis as { gc?: () => void }).gc;
const [file, workersArg] = process.argv.slice(2);
if (!file || !collect) {
  console.error("usage: node --expose-gc --max-semi-space-size=3 dist/bench/heap-phases.js SESSION [workers]");
  process.exit(2);
}

const mb = (bytes: number) => (bytes / 1e6).toFixed(1);

function row(step: string): void {
  const before = process.memoryUsage().heapUsed;
  collect!();
  collect!();
  console.log(`${step.padEnd(12)} live ${mb(process.memoryUsage().heapUsed).padStart(7)} MB  (before collecting ${mb(before)})`);
}

const runner = createChainRunner(Number(workersArg ?? 2));
try {
  row("start");
  const loaded = await scanSession(file, runner);
  row("scan");
  const model = await modelOfCooperatively(loaded);
  row("model");
  const options = { ...DEFAULT_COMPACT_OPTIONS, protectedTools: ["todowrite"] };
  const isProtected = makeProtectionPredicate(options);
  const chains = await driveSteps(detectChainsSteps(model.messages, isProtected));
  const graceKeys = await driveSteps(recoveryGraceKeysSteps(model.messages, options.recoveryGraceTurns));
  row("chains");
  await measureContextCooperatively(model, { isProtected, recoveryGraceTurns: options.recoveryGraceTurns });
  row("measure");
  const spans = await driveSteps(SpanIndex.steps(model.messages));
  row("span index");
  const eligible = selectEligible(chains, 0, (start) => model.state.isCompressed(start), graceKeys);
  const claimed = new Set<string>();
  const plans = eligible.map((chain) => planChain(chain, model.messages, spans, model.state, claimed));
  row("plans");
  console.log(`${loaded.entries.length} entries, ${chains.length} chains, ${plans.length} plans`);
} finally {
  await runner.close();
}
