/**
 * `chainpress query`: the archived original output(s), as context_tree_query shows them, with
 * spill files read back and checked against their recorded digest. A ref that is not found or
 * whose output (or an image the tool would attach) is missing/corrupt makes the command exit 1,
 * saying why. `--parts DIR` also writes each output's non-text parts to files (query-parts.ts).
 */

import { loadHasher, type Hasher } from "../../core/digest.js";
import { occurrenceKey } from "../../core/occurrence-key.js";
import type { ToolCallRecord } from "../../core/prune-types.js";
import { findRecords, formatQueryResult, QUERY_BLOCK_SEPARATOR, unavailableSpillBody, userTurnsByResult, type QueryMatch } from "../../core/query.js";
import type { SpillReadResult } from "../../io/read-spill.js";
import { callParts, readRecordText, type QueriedParts } from "../../main/archived-output.js";
import type { SessionModel } from "../../main/session-model.js";
import { CliError, describeError } from "../errors.js";
import type { FollowLinksFlag } from "../options.js";
import { writeErr, writeOut, type CliIo } from "../output.js";
import { loadForReading } from "../read-model.js";
import { matchParts, partsTarget, type PartsTarget } from "./query-parts.js";

interface Lookup {
  ref: string;
  matches: QueryMatch[];
  /** Full outputs, one per match (the fallback text where reading failed). */
  bodies: string[];
  /** Why a match's full output is unavailable, by match index (undefined when it was read). */
  unavailable: Array<string | undefined>;
}

export interface QueryFlags extends FollowLinksFlag {
  /** `--parts DIR`: write every non-text part there. */
  partsDir?: string;
}

export async function runQuery(io: CliIo, file: string, refs: string[], raw: boolean, flags: QueryFlags): Promise<number> {
  const model = await loadForReading(file, io, flags);
  const target = flags.partsDir === undefined ? undefined : partsTargetOf(file, flags.partsDir, model);
  const hasher = await loadHasher();
  // A Set: --parts and the listing may both find one part unreadable.
  const problems = new Set<string>();
  const lookups: Lookup[] = [];
  const problem = (what: string): void => void problems.add(`${file}: ${what}`);
  const read: ReadBody = (record) => readRecordText(record, model.editedOutputs, hasher, model.blobDir);
  for (const ref of refs) lookups.push(await lookUp(model.state, ref, read, problem));
  // --raw prints the texts when every text was read, whatever became of the parts.
  const textsRead = problems.size === 0;
  if (target !== undefined) for (const lookup of lookups) for (const match of lookup.matches) await matchParts(file, model, match, hasher, target, problem);
  // As context_tree_query lists them: the images it would attach are read back, within one call's budget.
  const parts = raw ? [] : await listedParts(model, lookups, hasher, problem);
  for (const line of problems) writeErr(io, `chainpress: ${line}`);
  if (raw) {
    if (textsRead) await writeRaw(io, lookups);
  } else {
    const turns = userTurnsByResult(model.messages);
    const turnOf = (record: ToolCallRecord): number | undefined => turns.get(occurrenceKey(record.toolCallId, record.resultTimestamp));
    const text = lookups.map((l, i) => formatQueryResult(l.ref, l.matches, l.bodies, { problems: l.unavailable, turnOf, parts: parts[i]! })).join(QUERY_BLOCK_SEPARATOR);
    await writeOut(io.stdout, `${text}\n`);
  }
  return problems.size === 0 ? 0 : 1;
}

/** The `--parts` folder, made when missing; a refusal names the session file too. */
export function partsTargetOf(file: string, dir: string, model: SessionModel): PartsTarget {
  try {
    return partsTarget(dir, model);
  } catch (error) {
    throw new CliError(`${file}: ${describeError(error)}`, { cause: error });
  }
}

/** Each lookup's matches' parts as one context_tree_query call lists them (core/query-parts.ts); an image that cannot be read back is a problem. */
async function listedParts(model: SessionModel, lookups: readonly Lookup[], hasher: Hasher, problem: (what: string) => void): Promise<QueriedParts[][]> {
  const call = callParts(model.editedOutputs, hasher, model.blobDir);
  const all: QueriedParts[][] = [];
  for (const lookup of lookups) {
    const parts: QueriedParts[] = [];
    for (const match of lookup.matches) {
      const got = await call.of(match.record);
      for (const line of got.lines) if (line.fate.kind === "unavailable") problem(`${match.label}: part ${line.n}: ${line.fate.reason} part: ${line.fate.detail}`);
      parts.push(got);
    }
    all.push(parts);
  }
  return all;
}

/** A record's full output as the model may read it (a context edit's text, or the archive's). */
type ReadBody = (record: ToolCallRecord) => Promise<SpillReadResult>;

async function lookUp(state: Parameters<typeof findRecords>[0], ref: string, read: ReadBody, problem: (what: string) => void): Promise<Lookup> {
  const matches = findRecords(state, ref);
  if (matches.length === 0) problem(`${ref}: not found in the archive index`);
  const bodies: string[] = [];
  const unavailable: Array<string | undefined> = [];
  for (const match of matches) {
    // The session's blob folder as it is now: a moved session still finds its spill files.
    const body = await read(match.record);
    unavailable.push(body.ok ? undefined : body.detail);
    if (body.ok) bodies.push(body.text);
    else {
      problem(`${match.label}: ${body.reason} output: ${body.detail}`);
      bodies.push(unavailableSpillBody(match.record));
    }
  }
  return { ref, matches, bodies, unavailable };
}

/** One output after another, NUL between them; bytes exactly as archived (UTF-8). */
async function writeRaw(io: CliIo, lookups: Lookup[]): Promise<void> {
  let first = true;
  for (const lookup of lookups) {
    for (const body of lookup.bodies) {
      if (!first) await writeOut(io.stdout, Buffer.from([0]));
      await writeOut(io.stdout, Buffer.from(body, "utf8"));
      first = false;
    }
  }
}
