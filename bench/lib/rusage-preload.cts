/**
 * Preloaded into a benchmarked child with `node --require <this file>`: when the process exits,
 * write its own getrusage (user + system CPU of ALL threads, peak RSS), and on Linux the main
 * thread's own CPU (/proc/thread-self/stat), as JSON to the path in CHAINPRESS_RUSAGE_OUT. Node cannot read a child's rusage from the parent, and a preload works
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
    const mainThreadCpuMs = mainThreadCpu();
    // Synchronous on purpose: nothing asynchronous runs after 'exit'.
    fs.writeFileSync(out, JSON.stringify({ code, usage, ...(mainThreadCpuMs === undefined ? {} : { mainThreadCpuMs }) }));
  });
}

/** utime + stime of the calling thread in ms (clock ticks of 10 ms), or undefined off Linux. */
function mainThreadCpu(): number | undefined {
  let stat: string;
  try {
    stat = fs.readFileSync("/proc/thread-self/stat", "utf8");
  } catch {
    // Not Linux: the figure is left out of the record, and the report shows none.
    return undefined;
  }
  // Fields after the parenthesised command name; utime and stime are the 14th and 15th of the line.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticksPerSecond = 100;
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond;
}
