/**
 * Diagnostics (reference §1.5): each `<kind>:<dedupKey>` is persisted once per process-session as a
 * `context-prune-diagnostic` entry. A failed append leaves the key unseen so a later report retries;
 * its failure is kept once per key (the extension re-reports on every render, and a list that grew
 * each time would be both a leak and useless), for `/pruner status` and the compact report.
 */

/** Distinct failed keys kept; beyond that only the count grows. */
const KEPT_FAILURES = 20;

import { CUSTOM_TYPE_DIAGNOSTIC } from "../core/custom-types.js";
import type { DiagnosticKind, DiagnosticReport } from "../core/prune-types.js";
import type { AppendEntry } from "./append-entry.js";

export class DiagnosticSink {
  private readonly seen = new Set<string>();
  readonly counters: Record<DiagnosticKind, number> = {
    "unresolved-range": 0,
    "range-id-mismatch": 0,
    "orphan-sweep": 0,
    "backfill-empty": 0,
    "backfill-skipped": 0,
  };
  /** Latest append failure per key, oldest key first. */
  private readonly failedKeys = new Map<string, string>();
  /** Failed appends in total, retries included. */
  failedAppends = 0;

  constructor(private readonly append: AppendEntry) {}

  async report(report: DiagnosticReport): Promise<void> {
    const key = `${report.kind}:${report.dedupKey}`;
    if (this.seen.has(key)) return;
    try {
      await this.append(CUSTOM_TYPE_DIAGNOSTIC, { kind: report.kind, detail: report.detail });
    } catch (error) {
      this.failedAppends++;
      this.failedKeys.delete(key);
      this.failedKeys.set(key, `diagnostic ${key} not persisted: ${(error as Error).message}`);
      if (this.failedKeys.size > KEPT_FAILURES) this.failedKeys.delete(this.failedKeys.keys().next().value!);
      return;
    }
    this.failedKeys.delete(key);
    this.seen.add(key);
    this.counters[report.kind]++;
  }

  /** Diagnostics whose append failed and has not succeeded since, one line per key. */
  get failures(): string[] {
    return [...this.failedKeys.values()];
  }

  /** Forget what was reported (session start / tree navigation). */
  reset(): void {
    this.seen.clear();
    this.failedKeys.clear();
    this.failedAppends = 0;
    for (const kind of Object.keys(this.counters) as DiagnosticKind[]) this.counters[kind] = 0;
  }
}
