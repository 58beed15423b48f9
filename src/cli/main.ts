#!/usr/bin/env -S node --max-semi-space-size=2
/**
 * The `chainpress` executable. The flag: the main thread keeps nearly every entry it builds for
 * the whole run, so a large young generation only adds a second copy of them before promotion; a
 * 2 MB one cut peak RSS at 20x1M from ~300 to ~248 MB with two workers, at the same speed
 * (bench/RESULTS.md). A host that runs chainpress in its own process (pi) keeps its own settings.
 */

import { runCli } from "./run-cli.js";
import { watchBrokenPipe } from "./output.js";

watchBrokenPipe(process.stdout);
// exitCode, not exit(): pending stdout writes still reach a pipe before the process ends.
process.exitCode = await runCli(process.argv.slice(2));
