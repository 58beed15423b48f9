// Spill files are written in two steps (io/write-spill.ts): a chain task stages them under
// temporary names, and the committing thread settles them (fsync, rename, folder fsync) before the
// chain's index entry is appended. A file appears under its final name only complete, and a
// failure leaves no temporary file behind.

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { discardStagedSpills, settleSpillFiles, stageSpillFiles, type SpillTarget } from "../src/io/write-spill.js";

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

function target(): SpillTarget {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "chainpress-spill-"));
  dirs.push(dir);
  return { blobDir: path.join(dir, "s-blobs"), fileMode: 0o600, dirMode: 0o700 };
}

const files = (n: number) => Array.from({ length: n }, (_, i) => ({ fileName: `out${i}.txt`, bytes: Buffer.from(`output ${i} `.repeat(1000 + i)) }));

describe("spill files, staged then settled", () => {
  it("are temporary files until settled, then complete under their final names with the session's permissions, and nothing else", async () => {
    const spill = target();
    // More than one settle batch.
    const written = files(70);
    const staged = stageSpillFiles(spill, written);
    expect(staged).toHaveLength(70);
    const names = () => fs.readdirSync(spill.blobDir).sort();
    expect(names().every((name) => name.startsWith(".tmp-"))).toBe(true);
    expect(staged.every((item) => !fs.existsSync(item.finalPath))).toBe(true);

    await settleSpillFiles(spill, staged);
    expect(names()).toEqual(written.map((file) => file.fileName).sort());
    for (const [i, file] of written.entries()) {
      expect(fs.readFileSync(staged[i]!.finalPath)).toEqual(file.bytes);
      expect(fs.statSync(staged[i]!.finalPath).mode & 0o777).toBe(0o600);
    }
  });

  it("a settle that fails (a final name taken by a folder) leaves each other file complete under its final name or gone, and no temporary file", async () => {
    const spill = target();
    const written = files(5);
    const staged = stageSpillFiles(spill, written);
    fs.mkdirSync(staged[2]!.finalPath);
    fs.writeFileSync(path.join(staged[2]!.finalPath, "x"), "keeps the folder non-empty");
    await expect(settleSpillFiles(spill, staged)).rejects.toThrow(/spill file is a directory, not a regular file/);
    const names = fs.readdirSync(spill.blobDir);
    expect(names.filter((name) => name.startsWith(".tmp-"))).toEqual([]);
    expect(names).toContain("out2.txt");
    for (const [i, item] of staged.entries()) if (i !== 2 && fs.existsSync(item.finalPath)) expect(fs.readFileSync(item.finalPath)).toEqual(written[i]!.bytes);
  });

  it("a final name already holding the same bytes is kept (a rerun after a crash); other bytes are never replaced", async () => {
    const spill = target();
    const written = files(2);
    await settleSpillFiles(spill, stageSpillFiles(spill, written));
    const placed = fs.statSync(path.join(spill.blobDir, "out0.txt"));
    await settleSpillFiles(spill, stageSpillFiles(spill, written));
    expect(fs.readdirSync(spill.blobDir).sort()).toEqual(["out0.txt", "out1.txt"]);
    expect(fs.statSync(path.join(spill.blobDir, "out0.txt")).ino).toBe(placed.ino);

    const other = [{ fileName: "out1.txt", bytes: Buffer.from("another output of the same name") }];
    await expect(settleSpillFiles(spill, stageSpillFiles(spill, other))).rejects.toMatchObject({
      reason: "spill-refused",
      message: expect.stringMatching(/out1\.txt already holds another output; .*a second session with the same id in this folder/),
    });
    expect(fs.readdirSync(spill.blobDir).sort()).toEqual(["out0.txt", "out1.txt"]);
    expect(fs.readFileSync(path.join(spill.blobDir, "out1.txt"))).toEqual(written[1]!.bytes);
  });

  it("a stage that fails leaves nothing; discarded files are removed, and discarding twice is harmless", () => {
    const spill = target();
    fs.mkdirSync(path.dirname(spill.blobDir), { recursive: true });
    fs.writeFileSync(spill.blobDir, "a file where the folder goes");
    expect(() => stageSpillFiles(spill, files(2))).toThrow(`${spill.blobDir}: spill folder is a regular file, not a folder; chainpress writes nothing through it and leaves it as it is`);

    const other = target();
    const staged = stageSpillFiles(other, files(3));
    discardStagedSpills(staged);
    discardStagedSpills(staged);
    expect(fs.readdirSync(other.blobDir)).toEqual([]);
    expect(stageSpillFiles(other, [])).toEqual([]);
  });
});
