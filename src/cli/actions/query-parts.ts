/**
 * An archived output's non-text parts on the command line: `--parts DIR` writes each to
 * `DIR/<ref>-<n>.<ext>` (core/part-file.ts: the decoded base64 data, else the part's JSON text),
 * and `--json` lists them. A part that cannot be read back is a problem naming the session file,
 * the ref and why; the others are still written.
 */

import fs from "node:fs";
import { partFacts, partFileName } from "../../core/archived-parts.js";
import type { Hasher } from "../../core/digest.js";
import { occurrenceKey } from "../../core/occurrence-key.js";
import { partFileContent } from "../../core/part-file.js";
import type { QueryMatch } from "../../core/query.js";
import { partLine } from "../../core/query-parts.js";
import { sanitizeForFileName } from "../../core/spill-layout.js";
import { preparePartsDir, writePartFile } from "../../io/part-files.js";
import { readAllParts } from "../../main/archived-output.js";
import { CliError, describeError } from "../errors.js";
import type { SessionModel } from "../../main/session-model.js";

/** One part as `--json` lists it. */
export interface PartJson {
  n: number;
  /** Its index in the output's content. */
  at: number;
  type: string;
  mimeType: string | null;
  /** An image's decoded data, else the part's JSON text, in bytes. */
  bytes: number;
  width?: number;
  height?: number;
  /** Kept in a spill file of its own (else inline in the record). */
  spilled: boolean;
  /** The name `--parts` gives its file. */
  file: string;
  /** Read back and verified; else `reason` and `detail` say why not. */
  available: boolean;
  reason?: string;
  detail?: string;
  /** With `--parts`: the file written, and what it holds ("data": the decoded data; "json": the part's JSON text). */
  written?: string;
  from?: "data" | "json";
}

/** Where `--parts` writes, and the mode its files get (the session file's: they hold what it holds). */
export interface PartsTarget {
  dir: string;
  mode: number;
}

export function partsTarget(dir: string, model: SessionModel): PartsTarget {
  preparePartsDir(dir);
  return { dir, mode: fs.statSync(model.loaded.file).mode & 0o666 };
}

/** The ref a match's files are named by: its short ref when it has one (`t12`), else its label made a file name. */
function fileRef(model: SessionModel, match: QueryMatch): string {
  const { record } = match;
  return model.state.refByKey.get(occurrenceKey(record.toolCallId, record.resultTimestamp)) ?? sanitizeForFileName(match.label);
}

/**
 * Every part of one match, read back; written to `target` when given. `problem` hears of each
 * part that could not be read, as `<label>: part <n>: ...`; a file that could not be written
 * throws a CliError naming the session `file`, the ref and the part.
 */
export async function matchParts(file: string, model: SessionModel, match: QueryMatch, hasher: Hasher, target: PartsTarget | undefined, problem: (what: string) => void): Promise<PartJson[]> {
  const ref = fileRef(model, match);
  const listed: PartJson[] = [];
  for (const { n, archived, read } of await readAllParts(match.record, model.editedOutputs, hasher, model.blobDir)) {
    const facts = partFacts(archived);
    const line = partLine(n, archived, { kind: "kept" }, read.ok ? read.part : undefined);
    const entry: PartJson = { n, at: archived.at, type: facts.type, mimeType: facts.mimeType ?? null, bytes: line.bytes, ...(line.size ?? {}), spilled: archived.kind === "spilled", file: partFileName(ref, n, facts.mimeType), available: read.ok };
    if (!read.ok) {
      Object.assign(entry, { reason: read.reason, detail: read.detail });
      problem(`${match.label}: part ${n}: ${read.reason} part: ${read.detail}`);
    } else if (target !== undefined) {
      const content = partFileContent(read.part);
      entry.written = await writePartFile(target.dir, entry.file, content.bytes, target.mode).catch((error: unknown) => {
        throw new CliError(`${file}: ${match.label}: part ${n}: not written: ${describeError(error)}`, { cause: error });
      });
      entry.from = content.from;
    }
    listed.push(entry);
  }
  return listed;
}
