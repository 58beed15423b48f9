#!/usr/bin/env -S node --max-semi-space-size=3 --interrupt-budget=300000 --no-turbo-inlining
/**
 * The `chainpress` executable. `npm start` runs src/cli/start-default.ts with the same flags.
 *
 * --interrupt-budget: V8 optimises a function with TurboFan once it has run this much bytecode
 * (default 67584). A compaction runs many loops that pass over the session once (the builder,
 * chain detection, planning, the context measures) and a worker's hot code once per isolate; with
 * the default, their optimising compiles were 26-28% of the whole CPU time at 20x1M, inline and
 * with 2 workers alike (perf, `v8::internal::compiler::*`), for loops that ended soon after. 4.4x
 * that budget leaves the short-lived ones to the baseline tiers: 20x1M with 2 workers, CPU
 * 2.55-2.71 -> 2.17-2.29 s and wall -12 to -14%; 116 MB -5%; 200x1M unchanged (bench/RESULTS.md).
 *
 * --no-turbo-inlining: TurboFan compiles each hot function without inlining its callees. With
 * two workers three isolates compile the same code (the worker's twice), and those compiles were
 * still ~19% of the process's CPU at 20x1M (perf: V8's platform threads). Without inlining each
 * is smaller: 20x1M with 2 workers CPU -5 to -10% in three sets of 4-8 interleaved rounds,
 * check-20x250k -11%; 116 MB, 200x1M and 20x1M inline unchanged (bench/RESULTS.md).
 *
 * --max-semi-space-size: the main thread keeps nearly every entry it builds for
 * the whole run, so a large young generation only adds a second copy of them before promotion; a
 * 2 MB one cut peak RSS at 20x1M from ~300 to ~248 MB with two workers, at the same speed
 * (bench/RESULTS.md). 3 MB since the eighth pass: what a chain's commit allocates lives a little
 * longer than 2 MB of allocation, and promoted it filled the old generation until the next full
 * collection (200x1M: 580-600 -> 539 MiB; 20x1M and 116 MB: +15 MiB, within budget).
 * A host that runs chainpress in its own process (pi) keeps its own settings.
 */

import { lowerOtherThreadsPriority } from "../io/thread-priority.js";
import { runCli } from "./run-cli.js";
import { watchBrokenPipe } from "./output.js";

// This process is chainpress's own: V8's compiler and GC threads yield to the main thread, as the
// pool's workers do (io/thread-priority.ts). Measured at 116 MB with 2 workers on 2 cores: the
// event loop's longest stall 23 -> 17 ms, the main thread's waits for a core 200-250 -> 130-210 ms.
lowerOtherThreadsPriority();

watchBrokenPipe(process.stdout);
// exitCode, not exit(): pending stdout writes still reach a pipe before the process ends.
process.exitCode = await runCli(process.argv.slice(2));
