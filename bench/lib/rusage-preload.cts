/**
 * Preloaded into a benchmarked child with `node --require <this file>`: when the process exits,
 * write its own getrusage (user + system CPU of ALL threads, peak RSS) as JSON to the path in
 * CHAINPRESS_RUSAGE_OUT. Node cannot read a child's rusage from the parent, and a preload works
 * for any program (our CLI, the upstream peer) without changing it.
 * CommonJS (.cts → .cjs) because `--require` loads CommonJS.
 */

import fs = require("node:fs");
import workerThreads = require("node:worker_threads");

const out = process.env.CHAINPRESS_RUSAGE_OUT;

// Worker threads inherit execArgv and so load this file too; only the main thread speaks for the
// process (getrusage(RUSAGE_SELF) already covers every thread).
if (out && workerThreads.isMainThread) {
  process.on("exit", (code) => {
    const usage = process.resourceUsage();
    // Synchronous on purpose: nothing asynchronous runs after 'exit'.
    fs.writeFileSync(out, JSON.stringify({ code, usage }));
  });
}
