/**
 * Where each message entry's line lies in a session file, by entry id: what lets a chain task read
 * its chain's lines from the file (workers/read-file-slice.ts) when the caller holds the messages in
 * memory, as pi does, instead of a scan of the file. Only each line's head is looked at: pi writes
 * an entry with JSON.stringify, keys in the order it made them, so a message entry's line starts
 * `{"type":"message","id":"`. A line in any other form is not indexed (its chain then goes to the
 * worker encoded), and the worker checks every line it reads against the plan in any case.
 *
 * The file is read in chunks with asynchronous reads, on libuv's threads; between two chunks the
 * caller's `pause` gives its event loop a turn.
 */

import fs from "node:fs";
import { HEX_ID_DIGITS, hexIdDigit, hexIdValue } from "../core/entry-id-set.js";
import { U32Table } from "../core/u32-table.js";
import { EntryLocations } from "./entry-locations.js";
import type { EntryLocation, LineMeta } from "./loaded-session.js";

/** Bytes read at a time: each is split into lines on the calling thread within a few milliseconds. */
const CHUNK_BYTES = 4 * 1024 * 1024;
/** How a message entry's line starts, as pi writes it. */
const MESSAGE_HEAD = Buffer.from('{"type":"message","id":"');
/** pi's ids are 8 hex digits; anything longer than this is not one of its lines. */
const ID_MAX_BYTES = 64;
const NEWLINE = 0x0a;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
/** An id that names two lines: neither is used. */
const AMBIGUOUS = -1;

export class EntryLines {
  /** Slots by id: pi's ids (8 hex digits) by their value, which needs no string per line; any other by its text. */
  private readonly hexSlots = new U32Table(true);
  private readonly otherSlots = new Map<string, number>();
  private readonly locations = new EntryLocations();

  constructor(readonly file: string) {}

  /** The line of the message entry `id`; undefined when no line, or more than one, has it. */
  locationOf(id: string): EntryLocation | undefined {
    const value = hexIdValue(id);
    const slot = value < 0 ? this.otherSlots.get(id) : this.hexSlots.get(value);
    return slot === undefined || slot === AMBIGUOUS ? undefined : this.locations.at(slot);
  }

  /** Message entries indexed (ids named by two lines not counted). */
  get size(): number {
    let size = 0;
    for (const slots of [this.hexSlots.valuesOf(), this.otherSlots.values()]) for (const slot of slots) if (slot !== AMBIGUOUS) size++;
    return size;
  }

  /** Adds the line of entry `id`: a number for a pi id (hexIdValue), else its text. */
  add(id: number | string, line: LineMeta): void {
    const known = typeof id === "number" ? this.hexSlots.get(id) : this.otherSlots.get(id);
    const slot = known === undefined ? this.locations.push(line, undefined, undefined) : AMBIGUOUS;
    if (typeof id === "number") this.hexSlots.set(id, slot);
    else this.otherSlots.set(id, slot);
  }
}

/**
 * The id of a message entry whose line is `data[start, end)`, read from the line's head: its value
 * when it is a pi id (8 lowercase hex digits, `hexIdValue`), else its text; undefined for any other
 * line.
 */
export function messageEntryId(data: Buffer, start: number, end: number): number | string | undefined {
  const idStart = start + MESSAGE_HEAD.length;
  if (idStart > end) return undefined;
  // Byte by byte: a view per line to compare cost more than the rest of the line's work.
  for (let k = 0; k < MESSAGE_HEAD.length; k++) if (data[start + k] !== MESSAGE_HEAD[k]) return undefined;
  const limit = Math.min(end, idStart + ID_MAX_BYTES + 1);
  let value = 0;
  for (let at = idStart; at < limit; at++) {
    const byte = data[at]!;
    if (byte === BACKSLASH) return undefined;
    if (byte === QUOTE) {
      if (at === idStart) return undefined;
      return at - idStart === HEX_ID_DIGITS && value >= 0 ? value : data.toString("utf8", idStart, at);
    }
    const digit = hexIdDigit(byte);
    value = digit < 0 || value < 0 ? -1 : value * 16 + digit;
  }
  return undefined;
}

/** Indexes the message entries' lines of `file`, as it is now. */
export async function readEntryLines(file: string, pause: () => Promise<void>): Promise<EntryLines> {
  const lines = new EntryLines(file);
  const handle = await fs.promises.open(file, "r");
  try {
    const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
    // File offset of buffer[0], and the 1-based number of the line that starts there.
    let position = 0;
    let line = 1;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, CHUNK_BYTES, position);
      if (bytesRead === 0) break;
      const data = buffer.subarray(0, bytesRead);
      let at = 0;
      for (let newline = data.indexOf(NEWLINE); newline !== -1; newline = data.indexOf(NEWLINE, at)) {
        indexLine(lines, data, at, newline, position + at, line++, true);
        at = newline + 1;
      }
      if (at === 0) {
        // No newline in a whole read: a line longer than a chunk, or the file's last line without
        // one. Its head is here; its end is further on, or the end of the file.
        const id = messageEntryId(data, 0, data.length);
        const end = await newlineFrom(handle, buffer, position + bytesRead);
        const bytes = (end === -1 ? await fileSize(handle) : end) - position;
        if (id !== undefined) lines.add(id, { byteOffset: position, bytes, line, terminated: end !== -1 });
        if (end === -1) break;
        line++;
        position = end + 1;
      } else {
        // The next read starts at the line this one cut.
        position += at;
      }
      await pause();
    }
  } finally {
    await handle.close();
  }
  return lines;
}

function indexLine(lines: EntryLines, data: Buffer, start: number, end: number, byteOffset: number, line: number, terminated: boolean): void {
  const id = messageEntryId(data, start, end);
  if (id !== undefined) lines.add(id, { byteOffset, bytes: end - start, line, terminated });
}

/** File offset of the first newline from `from` on, or -1 when the file ends first. */
async function newlineFrom(handle: fs.promises.FileHandle, buffer: Buffer, from: number): Promise<number> {
  for (let position = from; ; ) {
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, position);
    if (bytesRead === 0) return -1;
    const newline = buffer.subarray(0, bytesRead).indexOf(NEWLINE);
    if (newline !== -1) return position + newline;
    position += bytesRead;
  }
}

async function fileSize(handle: fs.promises.FileHandle): Promise<number> {
  return (await handle.stat()).size;
}
