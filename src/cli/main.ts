#!/usr/bin/env -S node --max-semi-space-size=3 --no-turbo-inlining
/**
 * The `chainpress` executable; `npm start` (src/cli/start-default.ts) passes the same flags. Every
 * worker compiles the same code again, so --no-turbo-inlining keeps optimising compiles small;
 * the tier-up budget (src/cli/tier-up-budget.ts) is raised at run time, where V8 has the flag.
 * --max-semi-space-size keeps the young generation small: the main thread keeps nearly every
 * entry it builds, which a large one would only copy before promoting. The shebang holds only
 * flags every supported node accepts (Node 20 and 22). A host that runs chainpress in its own
 * process (pi) keeps its own settings. Figures: bench/RESULTS.md.
 */

import { lowerOtherThreadsPriority } from "../io/thread-priority.js";
import { runCli } from "./run-cli.js";
import { watchBrokenPipe } from "./output.js";
import { raiseTierUpBudget } from "./tier-up-budget.js";

raiseTierUpBudget();

// This process is chainpress's own: V8's compiler and GC threads yield to the main thread, as the
// pool's workers do (io/thread-priority.ts), so the event loop waits less for a core.
lowerOtherThreadsPriority();

watchBrokenPipe(process.stdout);
// exitCode, not exit(): pending stdout writes still reach a pipe before the process ends. No
// top-level await: the bundle is CommonJS (scripts/bundle.mjs).
void runCli(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
