/**
 * Diagnostics (reference §1.5): each `<kind>:<dedupKey>` is persisted once per process-session as a
 * `context-prune-diagnostic` entry. A failed append leaves the key unseen so a later report retries.
 */

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
  };
  /** Append failures, kept so callers can show them instead of losing them. */
  readonly failures: string[] = [];

  constructor(private readonly append: AppendEntry) {}

  async report(report: DiagnosticReport): Promise<void> {
    const key = `${report.kind}:${report.dedupKey}`;
    if (this.seen.has(key)) return;
    try {
      await this.append(CUSTOM_TYPE_DIAGNOSTIC, { kind: report.kind, detail: report.detail });
    } catch (error) {
      this.failures.push(`diagnostic ${key} not persisted: ${(error as Error).message}`);
      return;
    }
    this.seen.add(key);
    this.counters[report.kind]++;
  }

  /** Forget what was reported (session start / tree navigation). */
  reset(): void {
    this.seen.clear();
    for (const kind of Object.keys(this.counters) as DiagnosticKind[]) this.counters[kind] = 0;
  }
}
