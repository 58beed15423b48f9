/**
 * Test-only crash points. When CHAINPRESS_CRASH_AT is `<point>:<n>`, the n-th time (1-based)
 * this process reaches `<point>` it kills itself with SIGKILL, so crash tests stop at an exact
 * write point instead of relying on timing. Unset in normal use: each call is one string compare.
 */

export type CrashPoint =
  | "spill-written"
  | "spill-renamed"
  | "index-append-partial"
  | "index-appended"
  | "chain-appended"
  | "migrate-written";

const spec = parseSpec(process.env.CHAINPRESS_CRASH_AT);
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

/** True when a crash test asked to stop at this point (used to write half a line first). */
export function crashPlanned(point: CrashPoint): boolean {
  return spec !== undefined && spec.point === point && hits + 1 === spec.n;
}
