/**
 * `chainpress query`: the archived original output(s), as context_tree_query shows them, with
 * spill files read back and checked against their recorded digest. A ref that is not found or
 * whose output is missing/corrupt makes the command exit 1, saying why.
 */

import { loadHasher } from "../../core/digest.js";
import { occurrenceKey } from "../../core/occurrence-key.js";
import type { ToolCallRecord } from "../../core/prune-types.js";
import { findRecords, formatQueryResult, QUERY_BLOCK_SEPARATOR, unavailableSpillBody, userTurnsByResult, type QueryMatch } from "../../core/query.js";
import type { SpillReadResult } from "../../io/read-spill.js";
import { readRecordText } from "../../main/archived-output.js";
import type { FollowLinksFlag } from "../options.js";
import { writeErr, writeOut, type CliIo } from "../output.js";
import { loadForReading } from "../read-model.js";

interface Lookup {
  ref: string;
  matches: QueryMatch[];
  /** Full outputs, one per match (the fallback text where reading failed). */
  bodies: string[];
  /** Why a match's full output is unavailable, by match index (undefined when it was read). */
  unavailable: Array<string | undefined>;
}

export async function runQuery(io: CliIo, file: string, refs: string[], raw: boolean, flags: FollowLinksFlag): Promise<number> {
  const model = await loadForReading(file, io, flags);
  const hasher = await loadHasher();
  const problems: string[] = [];
  const lookups: Lookup[] = [];
  const read: ReadBody = (record) => readRecordText(record, model.editedOutputs, hasher, model.blobDir);
  for (const ref of refs) lookups.push(await lookUp(model.state, ref, read, (what) => problems.push(`${file}: ${what}`)));
  for (const problem of problems) writeErr(io, `chainpress: ${problem}`);
  if (raw) {
    if (problems.length === 0) await writeRaw(io, lookups);
  } else {
    const turns = userTurnsByResult(model.messages);
    const turnOf = (record: ToolCallRecord): number | undefined => turns.get(occurrenceKey(record.toolCallId, record.resultTimestamp));
    const text = lookups.map((l) => formatQueryResult(l.ref, l.matches, l.bodies, { problems: l.unavailable, turnOf })).join(QUERY_BLOCK_SEPARATOR);
    await writeOut(io.stdout, `${text}\n`);
  }
  return problems.length === 0 ? 0 : 1;
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
