/** What the benchmark parent asks a child process to measure, and what comes back. Pure types. */

import type { EventLoopDelay } from "./event-loop.js";
import type { GcTotals } from "./gc-monitor.js";
import type { IoFloor } from "./io-floor.js";

export interface CaseRequest {
  /** Fixture to compact (never modified: the child compacts a fresh copy). */
  fixture: string;
  workers: number;
  /** Also time readSession+model and measureContext on their own (adds time, not to the wall). */
  measureLoad: boolean;
  /** Compactions of other fresh copies first, in the same process: measures warm (JIT-compiled) code. */
  warmups?: number;
}

/** The pieces of compactSession that CompactReport.stageMs does not cover, timed separately. */
export interface LoadTimings {
  /** readSession + modelOf (parse, branch, state). */
  loadMs: number;
  /** detectChains over the branch. */
  detectMs: number;
  /** One measureContext of the uncompacted session (compactSession runs it before and after). */
  contextMs: number;
}

export interface CaseResult {
  fixture: string;
  workers: number;
  fileBytes: number;
  /** compactSession wall time, ms (measured around the call, pool already warm). */
  wallMs: number;
  stageMs: Record<string, number>;
  /** CPU time of the whole process (all threads) during compaction, ms: less skewed by other users than wall time. */
  cpuMs: number;
  archivedChars: number;
  appendedBytes: number;
  appendedEntries: number;
  spilledFiles: number;
  spilledBytes: number;
  compressed: number;
  skipped: number;
  eventLoop: EventLoopDelay;
  /** Main-thread event-loop utilisation during compaction (1 = never idle: main-thread bound). */
  mainThreadBusy: number;
  /** Main-thread GC pauses during compaction. */
  gc: GcTotals;
  /** process.resourceUsage().maxRSS after compaction, in MB of 10^6 bytes (the child did nothing bigger before). */
  peakRssMb: number;
  floor: IoFloor;
  /** CPU ms to JSON.parse every line of the session (see measureParseCpuMs). */
  parseCpuMs: number;
  load?: LoadTimings;
  /** os.loadavg()[0] when the case started: other work on the machine skews timings. */
  loadAvg: number;
  /** Share of all CPUs busy with other work just before the case (set by the parent). */
  cpuBusyBefore?: number;
}
