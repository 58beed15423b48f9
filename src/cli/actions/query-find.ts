/**
 * `chainpress query --search` and `chainpress query <ref> --offset`: what context_tree_query's
 * search and paging give the model, for scripts and tests. `--json` prints the hits (best first),
 * or the page's exact text, the offset of the next page (null on the last) and the output's
 * non-text parts (query-parts.ts; pages hold text only), which `--parts DIR` also writes.
 */

import { loadHasher } from "../../core/digest.js";
import { formatOffset, pageOf, pageText } from "../../core/output-pages.js";
import type { QueryRequest } from "../../core/query-request.js";
import { searchJson, searchText } from "../../core/search-report.js";
import { readArchivedOutput } from "../../main/archived-output.js";
import { createChainRunner } from "../../main/chain-runner.js";
import { searchArchive, searchRequestOf } from "../../main/search-archive.js";
import { defaultWorkers, type FollowLinksFlag } from "../options.js";
import { writeErr, writeOut, type CliIo } from "../output.js";
import { loadForReading } from "../read-model.js";
import { partsTargetOf, type QueryFlags } from "./query.js";
import { matchParts } from "./query-parts.js";

/** Threads a search uses: what the machine has, at most two (reading spill files is most of it). */
const SEARCH_WORKERS = 2;

export async function runSearch(io: CliIo, file: string, request: Extract<QueryRequest, { kind: "search" }>, json: boolean, flags: FollowLinksFlag): Promise<number> {
  const model = await loadForReading(file, io, flags);
  const runner = createChainRunner(Math.min(SEARCH_WORKERS, defaultWorkers()));
  try {
    const findings = await searchArchive({ state: model.state, editedOutputs: model.editedOutputs, blobDir: model.blobDir, runner }, searchRequestOf(request));
    for (const unreadable of findings.unreadable) writeErr(io, `chainpress: warning: ${file}: ${unreadable.ref}: not searched: ${unreadable.detail}`);
    await writeOut(io.stdout, `${json ? JSON.stringify(searchJson(findings)) : searchText(request.pattern, findings, request.hasImages)}\n`);
    return 0;
  } finally {
    await runner.close();
  }
}

export async function runPage(io: CliIo, file: string, request: Extract<QueryRequest, { kind: "page" }>, json: boolean, flags: QueryFlags): Promise<number> {
  const model = await loadForReading(file, io, flags);
  const target = flags.partsDir === undefined ? undefined : partsTargetOf(file, flags.partsDir, model);
  const read = await readArchivedOutput(model.state, request.ref, model.editedOutputs, model.blobDir);
  if (!read.ok) {
    writeErr(io, `chainpress: ${file}: ${read.message}`);
    return 1;
  }
  const page = pageOf(read.text, request.from);
  if (typeof page === "string") {
    writeErr(io, `chainpress: ${file}: ${read.match.label}: ${page}`);
    return 1;
  }
  const { record } = read.match;
  const next = page.next === null ? null : formatOffset(page.next);
  const problems: string[] = [];
  const parts = json || target !== undefined ? await matchParts(file, model, read.match, await loadHasher(), target, (what) => problems.push(`${file}: ${what}`)) : [];
  for (const problem of problems) writeErr(io, `chainpress: ${problem}`);
  if (json) {
    const fields = { ref: read.match.label, toolCallId: record.toolCallId, toolName: record.toolName, text: page.text, next, offset: formatOffset(page.from), lastLine: page.lastLine, totalLines: page.totalLines, parts };
    await writeOut(io.stdout, `${JSON.stringify(fields)}\n`);
  } else await writeOut(io.stdout, `${pageText(read.match.label, page)}\n`);
  return problems.length === 0 ? 0 : 1;
}
