/**
 * A chain task's file slice in columns: per line a few numbers in one typed array and four arrays
 * of the plan's scalars, instead of an object per line. The main thread builds one per chain and
 * piscina clones it into the worker; as objects, the lines and their located outputs took far
 * longer to build and clone, on the thread everything else waits for. The worker reads them back as
 * ExpectedLine objects, which costs its own thread only.
 */

import type { EntryLocation } from "../io/loaded-session.js";
import { LITERAL_BYTES, LITERAL_DIGEST, LITERAL_FLAGS, LITERAL_JSON_LENGTH, LITERAL_NUMBERS, LITERAL_OFFSET, LITERAL_UNITS, LITERAL_UTF8_BYTES, type OutputLiteral } from "../io/output-literal.js";
import type { ExpectedLine, FileSlice } from "./chain-task.js";

/** Numbers per line in `locations`: byte offset, byte length, 1-based line number. */
const LOCATION_WIDTH = 3;
/**
 * Numbers per located output in `outputs`: the line's index in the slice, then the literal's
 * measures and flags, each at its position in the literal (io/output-literal.ts) from
 * OUTPUT_LITERAL on, then isError (1 or 0).
 */
const OUTPUT_LINE = 0;
const OUTPUT_LITERAL = 1;
const OUTPUT_IS_ERROR = OUTPUT_LITERAL + LITERAL_NUMBERS;
const OUTPUT_WIDTH = OUTPUT_IS_ERROR + 1;

/** Builds a FileSlice a line at a time, in span order. */
export class FileSliceWriter {
  private readonly locations: Float64Array;
  private readonly ids: string[] = [];
  private readonly roles: string[] = [];
  private readonly timestamps: unknown[] = [];
  private readonly toolCallIds: unknown[] = [];
  private readonly outputs: number[] = [];
  private readonly digests: string[] = [];

  constructor(
    private readonly file: string,
    lines: number,
  ) {
    this.locations = new Float64Array(LOCATION_WIDTH * lines);
  }

  /** The next line: where it lies, and what the plan says it holds (`toolCallId` undefined: none). */
  add(location: EntryLocation, id: string, role: string, timestamp: unknown, toolCallId: unknown, isError: boolean): void {
    const at = this.ids.length;
    if (LOCATION_WIDTH * (at + 1) > this.locations.length) throw new Error(`internal error: a file slice of ${this.locations.length / LOCATION_WIDTH} lines got more`);
    this.locations[LOCATION_WIDTH * at] = location.byteOffset;
    this.locations[LOCATION_WIDTH * at + 1] = location.bytes;
    this.locations[LOCATION_WIDTH * at + 2] = location.line;
    this.ids.push(id);
    this.roles.push(role);
    this.timestamps.push(timestamp);
    this.toolCallIds.push(toolCallId);
    const literal = location.output;
    if (literal === undefined) return;
    // OUTPUT_LINE, the literal's numbers in its order, OUTPUT_IS_ERROR.
    this.outputs.push(at, literal[LITERAL_OFFSET], literal[LITERAL_BYTES], literal[LITERAL_UNITS], literal[LITERAL_JSON_LENGTH], literal[LITERAL_UTF8_BYTES], literal[LITERAL_FLAGS], isError ? 1 : 0);
    this.digests.push(literal[LITERAL_DIGEST]);
  }

  slice(): FileSlice {
    if (this.ids.length * LOCATION_WIDTH !== this.locations.length) throw new Error("internal error: a file slice got fewer lines than it was made for");
    const { file, locations, ids, roles, timestamps, toolCallIds, digests } = this;
    return { file, locations, ids, roles, timestamps, toolCallIds, outputs: Float64Array.from(this.outputs), digests };
  }
}

/** The slice's lines as objects, in span order (the worker's side). */
export function expectedLines(slice: FileSlice): ExpectedLine[] {
  const { locations, outputs } = slice;
  const lines: ExpectedLine[] = [];
  for (let i = 0; i < slice.ids.length; i++) {
    const line: ExpectedLine = { byteOffset: locations[LOCATION_WIDTH * i]!, bytes: locations[LOCATION_WIDTH * i + 1]!, line: locations[LOCATION_WIDTH * i + 2]!, id: slice.ids[i]!, role: slice.roles[i]!, timestamp: slice.timestamps[i] };
    if (slice.toolCallIds[i] !== undefined) line.toolCallId = slice.toolCallIds[i];
    lines.push(line);
  }
  for (let k = 0; k < slice.digests.length; k++) {
    const at0 = OUTPUT_WIDTH * k;
    const n = (field: number) => outputs[at0 + OUTPUT_LITERAL + field]!;
    // In the literal's order (io/output-literal.ts).
    const literal: OutputLiteral = [n(LITERAL_OFFSET), n(LITERAL_BYTES), n(LITERAL_UNITS), n(LITERAL_JSON_LENGTH), n(LITERAL_UTF8_BYTES), n(LITERAL_FLAGS), slice.digests[k]!];
    const line = lines[outputs[at0 + OUTPUT_LINE]!];
    if (line === undefined) throw new Error(`internal error: a located output names line ${outputs[at0 + OUTPUT_LINE]} of a ${lines.length}-line slice`);
    line.output = { literal, isError: outputs[at0 + OUTPUT_IS_ERROR] === 1 };
  }
  return lines;
}

/** Bytes the slice's lines hold (the task's size, for its deadline). */
export function sliceBytes(slice: FileSlice): number {
  let bytes = 0;
  for (let i = 0; i < slice.ids.length; i++) bytes += slice.locations[LOCATION_WIDTH * i + 1]!;
  return bytes;
}
