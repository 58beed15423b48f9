#!/usr/bin/env -S node --max-semi-space-size=3 --interrupt-budget=300000 --no-turbo-inlining
/**
 * The `chainpress` executable; `npm start` (src/cli/start-default.ts) passes the same flags. Most
 * of a compaction's loops run once per session and every worker compiles the same code again, so
 * --interrupt-budget leaves short-lived code to V8's baseline tiers and --no-turbo-inlining keeps
 * optimising compiles small. --max-semi-space-size keeps the young generation small: the main
 * thread keeps nearly every entry it builds, which a large one would only copy before promoting. A
 * host that runs chainpress in its own process (pi) keeps its own settings. Figures:
 * bench/RESULTS.md.
 */

import { lowerOtherThreadsPriority } from "../io/thread-priority.js";
import { runCli } from "./run-cli.js";
import { watchBrokenPipe } from "./output.js";

// This process is chainpress's own: V8's compiler and GC threads yield to the main thread, as the
// pool's workers do (io/thread-priority.ts), so the event loop waits less for a core.
lowerOtherThreadsPriority();

watchBrokenPipe(process.stdout);
// exitCode, not exit(): pending stdout writes still reach a pipe before the process ends.
process.exitCode = await runCli(process.argv.slice(2));
