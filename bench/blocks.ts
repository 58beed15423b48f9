/**
 * `node dist/bench/blocks.js <main-thread .cpuprofile> [count]`
 * The longest stretches in which the main thread never went idle (what the event-loop delay
 * measures), each with the functions that took its time, from a `node --cpu-prof` profile:
 *   node --cpu-prof --cpu-prof-dir=bench/out/prof dist/bench/lib/case-child.js \
 *     '{"fixture":"fixtures/large-sessions/generated/20x1M-seed6.jsonl","workers":2,"measureLoad":false}'
 * The main thread's profile is the one whose name ends in `.0.001.cpuprofile`.
 *
 * `--gaps FILE` (from bench/el-gaps.ts): instead of busy stretches, which cannot see the short
 * turns a sliced loop gives the event loop, the stalls that loop measured, longest first.
 */

import fs from "node:fs";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  /** Microseconds of CLOCK_MONOTONIC. */
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

interface Block {
  startUs: number;
  endUs: number;
  /** Sampled microseconds per leaf node. */
  byNode: Map<number, number>;
}

const IDLE = new Set(["(idle)", "(program)"]);

function busyBlocks(profile: Profile, byId: Map<number, ProfileNode>): Block[] {
  const blocks: Block[] = [];
  let current: Block | undefined;
  let t = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    t += dt;
    if (IDLE.has(byId.get(id)!.callFrame.functionName)) {
      if (current) blocks.push(current);
      current = undefined;
      return;
    }
    current ??= { startUs: t, endUs: t, byNode: new Map() };
    current.endUs = t;
    current.byNode.set(id, (current.byNode.get(id) ?? 0) + dt);
  });
  if (current) blocks.push(current);
  return blocks.sort((a, b) => b.endUs - b.startUs - (a.endUs - a.startUs));
}

/** The samples inside each measured stall (times on the profile's clock). */
function gapBlocks(profile: Profile, gaps: ReadonlyArray<{ startUs: number; ms: number }>): Block[] {
  const blocks = [...gaps]
    .sort((a, b) => b.ms - a.ms)
    .map((gap): Block => ({ startUs: gap.startUs - profile.startTime, endUs: gap.startUs - profile.startTime + gap.ms * 1000, byNode: new Map() }));
  let t = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    t += dt;
    for (const block of blocks) if (t >= block.startUs && t <= block.endUs) block.byNode.set(id, (block.byNode.get(id) ?? 0) + dt);
  });
  return blocks;
}

/** Inclusive time per frame within a block (a frame counted once per stack). */
function inclusive(block: Block, stackOf: (id: number) => string[]): Array<[string, number]> {
  const totals = new Map<string, number>();
  for (const [id, us] of block.byNode) for (const frame of new Set(stackOf(id))) totals.set(frame, (totals.get(frame) ?? 0) + us);
  return [...totals].filter(([frame]) => frame !== "(root)").sort((a, b) => b[1] - a[1]);
}

function main(file: string, count: number, gapsFile: string | undefined): void {
  const profile = JSON.parse(fs.readFileSync(file, "utf8")) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const frameName = ({ callFrame: f }: ProfileNode) => (f.url ? `${f.functionName || "(anonymous)"} ${f.url.split("/").slice(-2).join("/")}:${f.lineNumber + 1}` : f.functionName);
  const stackOf = (id: number) => {
    const frames: string[] = [];
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) frames.push(frameName(byId.get(at)!));
    return frames;
  };
  const blocks = gapsFile ? gapBlocks(profile, JSON.parse(fs.readFileSync(gapsFile, "utf8"))) : busyBlocks(profile, byId);
  for (const block of blocks.slice(0, count)) {
    console.log(`--- ${((block.endUs - block.startUs) / 1000).toFixed(1)} ms ${gapsFile ? "stall" : "busy"}, starting at ${(block.startUs / 1e6).toFixed(2)} s`);
    for (const [frame, us] of inclusive(block, stackOf).slice(0, 12)) console.log(`${(us / 1000).toFixed(1).padStart(9)} ms  ${frame}`);
  }
}

const args = process.argv.slice(2);
const gapsAt = args.indexOf("--gaps");
const gapsFile = gapsAt === -1 ? undefined : args.splice(gapsAt, 2)[1];
main(args[0] ?? "", Number(args[1] ?? 8), gapsFile);
