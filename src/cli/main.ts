#!/usr/bin/env -S node --max-semi-space-size=3
/**
 * The `chainpress` executable. The flag: the main thread keeps nearly every entry it builds for
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
