/** What the rusage preload (rusage-preload.cts) writes. Pure types. */

export interface RusageRecord {
  /** The exit code the process was leaving with. */
  code: number;
  /** process.resourceUsage() at exit: userCPUTime/systemCPUTime in µs, maxRSS in KiB. */
  usage: NodeJS.ResourceUsage;
  /** CPU of the main thread alone, ms (Linux; 10 ms resolution). */
  mainThreadCpuMs?: number;
}
