#!/usr/bin/env node
/** The `chainpress` executable. */

import { runCli } from "./run-cli.js";
import { watchBrokenPipe } from "./output.js";

watchBrokenPipe(process.stdout);
// exitCode, not exit(): pending stdout writes still reach a pipe before the process ends.
process.exitCode = await runCli(process.argv.slice(2));
