/**
 * msgpackr, loaded on first use. Only the live path (pi's parsed messages, main/encode-slice.ts)
 * and its worker side (workers/run-chain-task.ts) encode with it; `chainpress compact` reads the
 * session file and never does. Loading it (and its native extractor) cost every process and every
 * worker thread time at startup, which a file-path run now skips. Also what msgpack would not give
 * back exactly (`msgpackAlters`), which then goes by structured clone instead.
 */

import { isWellFormedText } from "../core/well-formed-text.js";

type Msgpackr = typeof import("msgpackr");

/** The module, once asked for: one per thread, like any import. */
let loading: Promise<Msgpackr> | undefined;

export function loadMsgpack(): Promise<Msgpackr> {
  loading ??= import("msgpackr");
  return loading;
}

/**
 * True when msgpack would not give `value` back exactly: a lone surrogate (msgpack carries UTF-8)
 * or a `__proto__` key (msgpackr renames it to `__proto_`, a guard against prototype pollution).
 */
export function msgpackAlters(value: unknown): boolean {
  if (typeof value === "string") return !isWellFormedText(value);
  if (typeof value !== "object" || value === null) return false;
  if (Array.isArray(value)) return value.some(msgpackAlters);
  for (const key in value) {
    if (key === "__proto__" || !isWellFormedText(key)) return true;
    if (msgpackAlters((value as Record<string, unknown>)[key])) return true;
  }
  return false;
}
