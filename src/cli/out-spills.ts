/**
 * The bytes of a `--out` copy: the input's lines, except that a copy in another folder gets its
 * own spill files. Each spill file an index record names is verified and linked or copied from
 * the input's blob folder into the copy's, and the record's `spillPath` names it there; every
 * other byte of every line is the input's. A missing or damaged spill file fails the copy,
 * naming its entry: a copy whose query would fail is never made.
 */

import fs from "node:fs";
import path from "node:path";
import { loadHasher } from "../core/digest.js";
import { mayNameSpillFiles, relocateIndexLine, type NamedSpill } from "../core/relocate-spill-paths.js";
import { blobDirFor } from "../core/spill-layout.js";
import { ensureBlobFolder, fsyncFolder, placeSpillCopy, SpillCopyError } from "../io/place-spill-copy.js";
import { spillModesFor } from "../io/write-spill.js";
import { CliError } from "./errors.js";
import { readHeaderId } from "./preflight.js";

const CHUNK_BYTES = 1024 * 1024;
const NEWLINE = 0x0a;

interface SpillOfLine extends NamedSpill {
  line: number;
}

/** Writes the copy of `input` to `fd` (for the target `out`), then places the spill files its records name. */
export async function writeSelfContainedCopy(input: string, fd: number, out: string, inputMode: number): Promise<void> {
  const sessionId = readHeaderId(input);
  const inputDir = path.dirname(fs.realpathSync(input));
  const outDir = path.dirname(path.resolve(out));
  // The same folder is the same blob folder: the records already name the copy's files.
  if (sessionId === undefined || fs.realpathSync(outDir) === inputDir) {
    forEachLine(input, fd, (line) => line);
    return;
  }
  // As the compaction's own records will name it: the target's folder as given, not resolved.
  const blobDir = blobDirFor(outDir, sessionId);
  const spills: SpillOfLine[] = [];
  forEachLine(input, fd, (line, number) => {
    if (!mayNameSpillFiles(line)) return line;
    const relocated = relocateIndexLine(line, blobDir);
    if (relocated === undefined) return line;
    if (!relocated.ok) throw new CliError(`${where(input, number, relocated.spill)}: ${relocated.problem}; --out wrote no copy`);
    for (const spill of relocated.spills) spills.push({ ...spill, line: number });
    return relocated.bytes;
  });
  await placeSpills(input, blobDirFor(inputDir, sessionId), blobDir, spills, inputMode);
}

async function placeSpills(input: string, sourceDir: string, blobDir: string, spills: readonly SpillOfLine[], inputMode: number): Promise<void> {
  if (spills.length === 0) return;
  const hasher = await loadHasher();
  const { fileMode, dirMode } = spillModesFor(inputMode);
  const done = new Set<string>();
  try {
    if (ensureBlobFolder(blobDir, dirMode)) fsyncFolder(path.dirname(blobDir));
  } catch (error) {
    throw error instanceof SpillCopyError ? new CliError(`${error.message}; --out wrote no copy`) : error;
  }
  for (const spill of spills) {
    const key = JSON.stringify([spill.fileName, spill.spillBytes, spill.spillDigest, spill.contentHash, spill.toolName]);
    if (done.has(key)) continue;
    try {
      placeSpillCopy(path.join(sourceDir, spill.fileName), path.join(blobDir, spill.fileName), spill, fileMode, hasher);
    } catch (error) {
      if (!(error instanceof SpillCopyError)) throw error;
      throw new CliError(`${where(input, spill.line, spill)}: ${error.message}; --out wrote no copy`);
    }
    done.add(key);
  }
  fsyncFolder(blobDir);
}

function where(input: string, line: number, spill: Pick<NamedSpill, "entryId" | "toolCallId">): string {
  return `${input}:${line}: context-prune-index entry ${spill.entryId}, record ${spill.toolCallId}`;
}

/** Each line of `input` (without its line feed) through `map`, written to `fd` in batches. */
function forEachLine(input: string, fd: number, map: (line: Uint8Array, number: number) => Uint8Array): void {
  const source = fs.openSync(input, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  const writer = new BatchWriter(fd);
  try {
    const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
    let pending: Buffer[] = [];
    let number = 0;
    for (;;) {
      const got = fs.readSync(source, chunk, 0, chunk.length, null);
      if (got === 0) break;
      const bytes = chunk.subarray(0, got);
      let from = 0;
      for (let end = bytes.indexOf(NEWLINE, from); end !== -1; end = bytes.indexOf(NEWLINE, from)) {
        const piece = bytes.subarray(from, end);
        const line = pending.length === 0 ? piece : Buffer.concat([...pending, piece]);
        pending = [];
        writer.write(map(line, ++number));
        writer.write(LINE_FEED);
        from = end + 1;
      }
      if (from < got) pending.push(Buffer.from(bytes.subarray(from)));
    }
    // A last line without its line feed is copied as it is.
    if (pending.length > 0) writer.write(map(Buffer.concat(pending), ++number));
    writer.flush();
  } finally {
    fs.closeSync(source);
  }
}

const LINE_FEED = Uint8Array.of(NEWLINE);

/** Copies what it is given into one buffer and writes it when full: few write(2) calls, whatever the lines. */
class BatchWriter {
  private readonly buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  private used = 0;

  constructor(private readonly fd: number) {}

  write(bytes: Uint8Array): void {
    if (this.used + bytes.length > this.buffer.length) this.flush();
    if (bytes.length > this.buffer.length) return writeAll(this.fd, bytes);
    this.buffer.set(bytes, this.used);
    this.used += bytes.length;
  }

  flush(): void {
    writeAll(this.fd, this.buffer.subarray(0, this.used));
    this.used = 0;
  }
}

function writeAll(fd: number, bytes: Uint8Array): void {
  let written = 0;
  while (written < bytes.length) written += fs.writeSync(fd, bytes, written, bytes.length - written);
}
