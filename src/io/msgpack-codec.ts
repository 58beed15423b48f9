/**
 * msgpackr, loaded on first use. Only the live path (pi's parsed messages, main/encode-slice.ts)
 * and its worker side (workers/run-chain-task.ts) encode with it; `chainpress compact` reads the
 * session file and never does. Loading it (and its native extractor) cost every process and every
 * worker thread time at startup, which a file-path run now skips.
 */

type Msgpackr = typeof import("msgpackr");

/** The module, once asked for: one per thread, like any import. */
let loading: Promise<Msgpackr> | undefined;

export function loadMsgpack(): Promise<Msgpackr> {
  loading ??= import("msgpackr");
  return loading;
}
