// io/shard-bounds.ts cuts a session file into ranges of whole lines, reading only the bytes around
// each cut: each range ends at the first line start at or past its start plus the size asked for
// there, and together the ranges cover the file exactly.

import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { shardBounds } from "../src/io/shard-bounds.js";
import { scanScratch } from "./helpers/scan-scratch.js";

const { writeTemp } = scanScratch("chainpress-bounds-");

/** Lines of varied lengths (one far longer than the shards asked for), the last one unterminated. */
function content(): string {
  const lines: string[] = [];
  for (let i = 0; i < 400; i++) lines.push("x".repeat((i * 37) % 300));
  lines.splice(200, 0, "y".repeat(50_000));
  return lines.join("\n");
}

/** Offsets where a line starts (after each "\n"), and 0. */
function lineStarts(bytes: Buffer): number[] {
  const starts = [0];
  for (let i = 0; i < bytes.length; i++) if (bytes[i] === 0x0a && i + 1 < bytes.length) starts.push(i + 1);
  return starts;
}

describe("shardBounds", () => {
  it.each([
    ["a fixed size", 1000, () => 1000],
    ["a size that depends on where the shard starts", (start: number) => (start < 40_000 ? 3000 : 500), (start: number) => (start < 40_000 ? 3000 : 500)],
  ] as const)("%s: contiguous ranges of whole lines, each ending at the first line start past its size", async (_, asked, sizeAt) => {
    const file = writeTemp(content());
    const bytes = fs.readFileSync(file);
    const starts = lineStarts(bytes);
    const ranges = await shardBounds(file, bytes.length, asked);
    expect(ranges[0]!.start).toBe(0);
    expect(ranges.at(-1)!.end).toBe(bytes.length);
    for (const [i, range] of ranges.entries()) {
      if (i > 0) expect(range.start).toBe(ranges[i - 1]!.end);
      expect(starts).toContain(range.start);
      const firstStartPast = starts.find((at) => at >= range.start + sizeAt(range.start)) ?? bytes.length;
      expect(range.end).toBe(firstStartPast);
    }
    // The long line is inside one range, which ends right after it.
    const long = bytes.indexOf("y".repeat(50_000));
    expect(ranges.some((range) => range.start <= long && range.end === long + 50_001)).toBe(true);
  });

  it("one range for a file smaller than a shard, none past its end", async () => {
    const file = writeTemp("a\nb\nc\n");
    expect(await shardBounds(file, 6, 1 << 20)).toEqual([{ start: 0, end: 6 }]);
    expect(await shardBounds(file, 6, 1)).toEqual([
      { start: 0, end: 2 },
      { start: 2, end: 4 },
      { start: 4, end: 6 },
    ]);
  });
});
