/**
 * Test-only crash points. When CHAINPRESS_CRASH_AT is `<point>:<n>`, the n-th time (1-based)
 * this process reaches `<point>` it kills itself with SIGKILL, so crash tests stop at an exact
 * write point instead of relying on timing. Unset in normal use: each call is one string compare.
 */

export type CrashPoint =
  /** write-spill.ts: a spill file's temp copy is complete and fsynced, not yet under its final name. */
  | "spill-written"
  /** write-spill.ts: a spill file is under its final name, its temporary name gone (folder not yet fsynced). */
  | "spill-renamed"
  /** append-session.ts: half of an index line is written and fsynced; the process dies there. */
  | "index-append-partial"
  /** append-session.ts: an index line is written (not yet fsynced: group commit). */
  | "index-appended"
  /** commit-group.ts: a group's chain entries are durable; once per chain registered. */
  | "chain-appended"
  /** migrate-file.ts: a version-1/2 file was rewritten as version 3 (renamed, durable), nothing appended yet. */
  | "migrate-written"
  /** atomic-write.ts: an atomic rewrite's temp file is complete and fsynced, not yet renamed (migration, --repair). */
  | "atomic-temp-written";

const spec = parseSpec(process.env.CHAINPRESS_CRASH_AT);
/** Passes of `spec.point` so far: per process, as the spec counts them. */
let hits = 0;

function parseSpec(raw: string | undefined): { point: string; n: number } | undefined {
  if (!raw) return undefined;
  const [point, n] = raw.split(":");
  return point ? { point, n: Number(n ?? "1") || 1 } : undefined;
}

export function crashPoint(point: CrashPoint): void {
  if (!spec || spec.point !== point) return;
  hits++;
  if (hits === spec.n) process.kill(process.pid, "SIGKILL");
}

/**
 * True when a crash test asked to stop at this pass of `point` (used to write half a line
 * first). Call it once per pass; when it returns true the caller must then call
 * `crashPoint(point)`, which counts that pass and dies. A pass it returns false for is counted
 * here, so `<point>:<n>` with n > 1 stops at the n-th pass (not only at the first).
 */
export function crashPlanned(point: CrashPoint): boolean {
  if (spec === undefined || spec.point !== point) return false;
  if (hits + 1 === spec.n) return true;
  hits++;
  return false;
}
