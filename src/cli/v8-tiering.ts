/**
 * A compaction is a short batch job, and V8's default tiering is tuned for long-running pages: it
 * optimises a function after little use, then often again after a deopt, on background threads
 * that the workers compete with. Measured here (20x1M fixture, 2 cores): optimising compiles took
 * ~430 ms of a ~1.5 s CPU run inline, and each worker isolate compiles the same code again. A
 * larger interrupt budget leaves cold and lukewarm code in the interpreter and baseline tiers:
 * 10-15% less CPU with workers 0 and 2 alike. V8 flags are process-wide, so the pool's workers
 * (started after this) get it too. Imported first by the executable only: inside pi, chainpress
 * is a guest and leaves the process's flags alone.
 */

import v8 from "node:v8";

/** Bytecode budget between tier-up checks (V8's default in Node 20: 66 KiB). */
const INTERRUPT_BUDGET = 512 * 1024;

v8.setFlagsFromString(`--interrupt-budget=${INTERRUPT_BUDGET}`);
