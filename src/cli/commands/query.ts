/** `chainpress query <session> <ref…>`: the command line; the work is in actions/query.ts and actions/query-find.ts. */

import type { Command } from "commander";
import { digitGroups } from "../../core/digit-groups.js";
import { MAX_IMAGE_CHARS_PER_CALL, MAX_IMAGES_PER_CALL } from "../../core/query-parts.js";
import { parseQueryRequest } from "../../core/query-request.js";
import { UsageError } from "../errors.js";
import { addFollowLinksOption, FOLLOW_LINKS_READ_HELP, integerParser, type FollowLinksFlag } from "../options.js";
import type { CliIo } from "../output.js";
import type { ExitState } from "../run-cli.js";

const HELP_AFTER = `
A ref is a short ref (t12), a tool-call id (every occurrence of it), or id@resultTimestamp.
Without --raw the output is exactly what context_tree_query returns (bodies truncated to
2000 lines / 50 KiB, with the offset of the next page). With --raw only the full original
outputs are printed, as their exact UTF-8 bytes; several outputs are separated by one NUL
byte. --raw prints nothing if any ref fails.

Parts: an output's non-text content parts (images, any other kind) are listed under its header,
numbered from 1 in content order; context_tree_query attaches the images after its text (at
most ${MAX_IMAGES_PER_CALL} images and ${digitGroups(MAX_IMAGE_CHARS_PER_CALL)} base64 characters per call; pages hold text only).
--raw prints the text only.
--parts DIR writes each part of each output to DIR/tN-<n>.<ext> (n as listed; ext png, jpeg,
gif, webp from its mime type, else bin): exactly the bytes its base64 data decodes to, or, for a
part without base64 data, the part's JSON text. DIR is made when missing and must not be a
link; each file is written whole (temporary name, fsync, rename) or not at all. A part that
cannot be read back (its spill file missing or damaged) is named on stderr and the exit is 1;
the text and the other parts still come back. With --json (one ref) "parts" lists them: {"n",
"at", "type", "mimeType", "bytes", "width", "height", "spilled", "file", "available", "reason",
"detail", "written", "from"}.

Pages: chainpress query s.jsonl t12 --offset 2001 [--json] prints one page of one output, as
context_tree_query with "offset" does: whole lines from a 1-based line, or L:C for character C
of a line longer than a page. --json prints {"text", "next", ...}: text is the page exactly,
next what to pass as --offset for the next page (null on the last). The pages, concatenated,
are the output byte for byte.

Search: chainpress query s.jsonl --search "npm test" [--regex] [--case-sensitive] [--tool bash]
[--block b3] [--limit 10] [--json] finds archived outputs (and calls whose args match), best
first, as context_tree_query with "search" does. --json prints {"hits":[{"ref", "toolCallId",
"toolName", "target", "blockId", "chars", "matches", "lines", ...}], "total", ...}.
--has-images keeps only outputs that hold images (--no-has-images: none); without --search it
lists the outputs holding images, newest first.`;

interface QueryFlags extends FollowLinksFlag {
  raw?: boolean;
  parts?: string;
  json?: boolean;
  offset?: string;
  search?: string;
  regex?: boolean;
  caseSensitive?: boolean;
  tool?: string[];
  block?: string;
  limit?: number;
  hasImages?: boolean;
}

export function registerQuery(program: Command, io: CliIo, exit: ExitState): void {
  const command = program
    .command("query")
    .description("print archived original tool outputs (spill files verified), one page of one, or a search of them all")
    .argument("<session>", "session file (*.jsonl)")
    .argument("[refs...]", "tN short refs, tool-call ids, or id@resultTimestamp")
    .option("--raw", "print only the exact original output bytes (NUL-separated when several); text only")
    .option("--parts <dir>", "also write each output's non-text parts (images) to <dir>/tN-<n>.<ext>")
    .option("--offset <place>", "one page of one output, from this line (or L:C inside a long line)")
    .option("--search <text>", "find archived outputs holding this text (literal, case-insensitive)")
    .option("--regex", "--search is a JavaScript regular expression")
    .option("--case-sensitive", "--search matches case")
    .option("--tool <name...>", "search only calls of these tools")
    .option("--block <bN>", "search only this compressed chain")
    .option("--has-images", "search only outputs that hold images; without --search, list them newest first")
    .option("--no-has-images", "search only outputs that hold no images")
    .option("--limit <n>", "most hits to print, best first (default 10, at most 50)", integerParser(1))
    .option("--json", "print the page or the search as JSON");
  addFollowLinksOption(command)
    .addHelpText("after", HELP_AFTER + FOLLOW_LINKS_READ_HELP)
    .action(async (session: string, refs: string[], options: QueryFlags) => {
      exit.code = await dispatch(io, session, refs, options);
    });
}

async function dispatch(io: CliIo, session: string, refs: string[], options: QueryFlags): Promise<number> {
  const json = options.json === true;
  const paged = options.offset !== undefined || (json && options.search === undefined && options.hasImages === undefined);
  const request = parseQueryRequest({
    toolCallIds: refs,
    ...(paged ? { offset: options.offset ?? "1" } : {}),
    ...(options.search !== undefined ? { search: options.search, regex: options.regex === true, caseSensitive: options.caseSensitive === true } : {}),
    ...(options.tool ? { toolNames: options.tool } : {}),
    ...(options.block !== undefined ? { blockId: options.block } : {}),
    ...(options.limit !== undefined ? { limit: options.limit } : {}),
    ...(options.hasImages !== undefined ? { hasImages: options.hasImages } : {}),
  });
  if (typeof request === "string") throw new UsageError(request);
  if (options.raw === true && request.kind !== "refs") throw new UsageError("--raw prints whole outputs by ref: it goes with neither --search, --offset nor --json");
  if (options.parts !== undefined && (request.kind === "search" || options.offset !== undefined)) throw new UsageError("--parts writes the parts of outputs by ref: it goes with neither --search nor --offset");
  const flags = { ...options, ...(options.parts !== undefined ? { partsDir: options.parts } : {}) };
  if (request.kind === "search") return (await import("../actions/query-find.js")).runSearch(io, session, request, json, flags);
  if (request.kind === "page") return (await import("../actions/query-find.js")).runPage(io, session, request, json, flags);
  const { runQuery } = await import("../actions/query.js");
  return runQuery(io, session, request.refs, options.raw === true, flags);
}
