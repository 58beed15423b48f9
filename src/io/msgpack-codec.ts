/**
 * msgpackr, loaded on first use. Only the live path (pi's parsed messages, main/encode-slice.ts)
 * and its worker side (workers/run-chain-task.ts) encode with it; `chainpress compact` reads the
 * session file and never does. Loading it (and its native extractor) cost every process and every
 * worker thread time at startup, which a file-path run now skips. Also what msgpack would not give
 * back exactly, or nests too deep for it (`messageCarrier`), which then goes another way.
 */

import { CLONE_MAX_DEPTH } from "../core/json-text.js";
import { isWellFormedText } from "../core/well-formed-text.js";

type Msgpackr = typeof import("msgpackr");

/** The module, once asked for: one per thread, like any import. */
let loading: Promise<Msgpackr> | undefined;

export function loadMsgpack(): Promise<Msgpackr> {
  loading ??= import("msgpackr");
  return loading;
}

/**
 * How `value` (a message) reaches a worker exactly: "msgpack"; "clone" (structured clone) where
 * msgpack would not give it back exactly, a lone surrogate (msgpack carries UTF-8) or a `__proto__`
 * key (msgpackr renames it to `__proto_`, a guard against prototype pollution); "json" where it
 * nests deeper than CLONE_MAX_DEPTH (JSON.parse reads any depth, and keeps both). Iterative.
 */
export function messageCarrier(value: unknown): "msgpack" | "clone" | "json" {
  let alters = false;
  const nodes: unknown[] = [value];
  const depths: number[] = [0];
  while (nodes.length > 0) {
    const node = nodes.pop();
    const depth = depths.pop()!;
    if (typeof node === "string") {
      alters ||= !isWellFormedText(node);
      continue;
    }
    if (typeof node !== "object" || node === null) continue;
    if (depth >= CLONE_MAX_DEPTH) return "json";
    if (Array.isArray(node)) {
      for (const child of node) {
        nodes.push(child);
        depths.push(depth + 1);
      }
      continue;
    }
    for (const key in node) {
      alters ||= key === "__proto__" || !isWellFormedText(key);
      nodes.push((node as Record<string, unknown>)[key]);
      depths.push(depth + 1);
    }
  }
  return alters ? "clone" : "msgpack";
}
