/**
 * The measuring loop of bench:compare: for one fixture, `iterations` rounds; each round runs every
 * contender once, in an order rotated by one per round (so none always runs first, after the
 * fixture was just read, or last, after the others warmed the disk cache), then measures the
 * yardsticks of that round on the same machine state: one JSON.parse of the file (CPU), a bare
 * node process's start, and the I/O floor of the bytes chainpress wrote. A failing run is printed and left out of the medians.
 */

import { contendersFor, runContender, type Contender, type Sample } from "./contenders.js";
import { measureIoFloor, measureParseCpuMs, type IoFloor } from "./io-floor.js";
import { measureNodeStartMs } from "./node-start.js";
import { freshCopy } from "./scratch-copy.js";

export interface RoundOptions {
  fixture: string;
  iterations: number;
  workerCounts: readonly number[];
  cliFile: string;
  peerFile?: string;
}

export interface RoundYardsticks {
  round: number;
  parseCpuMs: number;
  nodeStartMs: number;
  /** Undefined when no chainpress run of the round succeeded (nothing to size the floor on). */
  floor?: IoFloor;
}

export interface FixtureRuns {
  contenders: Contender[];
  samples: Sample[];
  yardsticks: RoundYardsticks[];
}

export async function runRounds(options: RoundOptions): Promise<FixtureRuns> {
  const contenders = contendersFor(options.workerCounts, options.peerFile !== undefined);
  const samples: Sample[] = [];
  const yardsticks: RoundYardsticks[] = [];
  for (let round = 0; round < options.iterations; round++) {
    const order = contenders.map((_, i) => contenders[(i + round) % contenders.length]!);
    const context = { fixture: options.fixture, round, cliFile: options.cliFile, ...(options.peerFile ? { peerFile: options.peerFile } : {}) };
    const inRound: Sample[] = [];
    for (const contender of order) {
      const sample = await runContender(contender, context);
      printSample(sample);
      inRound.push(sample);
    }
    samples.push(...inRound);
    yardsticks.push(await yardsticksOf(options.fixture, round, inRound));
  }
  return { contenders, samples, yardsticks };
}

function printSample(s: Sample): void {
  const el = s.eventLoopMaxMs === undefined ? "" : `, event loop max ${s.eventLoopMaxMs.toFixed(1)} ms`;
  const what = `  round ${s.round + 1} ${s.contender.padEnd(10)} wall ${s.wallMs.toFixed(0)} ms, CPU ${s.cpuMs.toFixed(0)} ms, peak RSS ${(s.peakRssBytes / 1e6).toFixed(0)} MB${el}, ${s.compressed} chains`;
  if (s.ok) {
    console.log(what);
    return;
  }
  console.log(`${what}  FAILED (${s.failure})`);
  console.error(s.stderr.trimEnd() || "(no stderr)");
}

/**
 * The floor is sized on the round's chainpress run with the most workers (its appended bytes,
 * entries and spill files), on another fresh copy of the fixture.
 */
async function yardsticksOf(fixture: string, round: number, inRound: readonly Sample[]): Promise<RoundYardsticks> {
  const parseCpuMs = measureParseCpuMs(fixture);
  const nodeStartMs = measureNodeStartMs();
  const sized = inRound.filter((s) => s.ok && s.contender.startsWith("workers=")).sort((a, b) => workersOf(b) - workersOf(a))[0];
  if (!sized) return { round, parseCpuMs, nodeStartMs };
  const copy = freshCopy(fixture, "floor");
  try {
    const work = { sessionFile: copy.file, scratchDir: copy.dir, appendedBytes: sized.appendedBytes, appendedEntries: sized.appendedEntries, spillSizes: sized.spillSizes };
    return { round, parseCpuMs, nodeStartMs, floor: await measureIoFloor(work) };
  } finally {
    copy.remove();
  }
}

function workersOf(sample: Sample): number {
  return Number(sample.contender.slice("workers=".length));
}
