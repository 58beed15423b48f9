/**
 * The findable archive's measures (issue 39), on a compacted session loaded in this process:
 *   - findability: for each archived output with a line no other output holds, a literal search
 *     for that line ranks the output in the top 3; a search for a file call's path finds every
 *     archived call on that path;
 *   - map coverage: of the file calls (read, edit, write) of chains whose map is not cut, the share
 *     whose ref and file name stand on one line of the rendered context; and what the maps cost
 *     against the output characters they map.
 * Ranking uses the same functions as the workers (core/archive-search.ts), here in one thread.
 */

import path from "node:path";
import { compareHits, PatternMatcher, searchOutput, type SearchDoc, type SearchHit, type SearchPattern } from "../../src/core/archive-search.js";
import { callPath, callTarget } from "../../src/core/call-target.js";
import { MAP_HEADER } from "../../src/core/archive-map.js";
import type { ToolCallRecord } from "../../src/core/prune-types.js";
import type { AgentMessage } from "../../src/core/session-types.js";
import type { SessionModel } from "../../src/main/session-model.js";

export interface ArchivedOutput {
  ref: string;
  record: ToolCallRecord;
  text: string;
  blockId: string | null;
}

export interface Findability {
  outputs: number;
  /** Outputs that have a line no other archived output holds (the ones measured). */
  withUniqueLine: number;
  inTop3: number;
  /** Distinct paths of file calls, and how many of them a search found every call of. */
  paths: number;
  pathsFoundWhole: number;
}

export interface MapCoverage {
  chains: number;
  /** Chains whose map lists every call (not cut by its budget). */
  uncut: number;
  fileCalls: number;
  fileCallsOnOneLine: number;
  mapChars: number;
  mappedChars: number;
}

const FILE_TOOLS = new Set(["read", "edit", "write"]);
/** Lines shorter than this are too plain to be a fair test (a brace, a blank). */
const MIN_LINE_CHARS = 12;

/** The archive's outputs in ref order, as the model may search them. */
export function archivedOutputs(model: SessionModel, texts: ReadonlyMap<string, string>): ArchivedOutput[] {
  const blockOf = new Map<string, string>();
  for (const entry of model.state.chains.values()) for (const ref of entry.toolRefs ?? []) blockOf.set(ref, entry.blockId);
  const outputs: ArchivedOutput[] = [];
  for (const [key, record] of model.state.records) {
    const ref = model.state.displayRef(key);
    outputs.push({ ref, record, text: texts.get(key) ?? record.resultText, blockId: blockOf.get(ref) ?? null });
  }
  return outputs;
}

function docOf(output: ArchivedOutput, order: number): SearchDoc {
  const { record } = output;
  return { ref: output.ref, toolCallId: record.toolCallId, toolName: record.toolName, target: callTarget(record.args), blockId: output.blockId, argsJson: JSON.stringify(record.args ?? null), order };
}

function rank(outputs: readonly ArchivedOutput[], pattern: SearchPattern): SearchHit[] {
  const hits: SearchHit[] = [];
  const matcher = new PatternMatcher(pattern);
  outputs.forEach((output, order) => {
    const hit = searchOutput(docOf(output, order), output.text, matcher);
    if (hit) hits.push(hit);
  });
  return hits.sort(compareHits);
}

export function measureFindability(outputs: readonly ArchivedOutput[], sampleEvery = 1): Findability {
  const holders = new Map<string, Set<number>>();
  outputs.forEach((output, i) => {
    for (const line of new Set(output.text.split("\n"))) {
      if (line.trim().length < MIN_LINE_CHARS) continue;
      let set = holders.get(line);
      if (!set) holders.set(line, (set = new Set()));
      set.add(i);
    }
  });
  const result: Findability = { outputs: outputs.length, withUniqueLine: 0, inTop3: 0, paths: 0, pathsFoundWhole: 0 };
  outputs.forEach((output, i) => {
    if (i % sampleEvery !== 0) return;
    // The output's unique line that no other output holds even inside a line of its own.
    const line = output.text.split("\n").find((l) => l.trim().length >= MIN_LINE_CHARS && holders.get(l)?.size === 1);
    if (line === undefined) return;
    result.withUniqueLine++;
    const top = rank(outputs, { kind: "literal", text: line, caseSensitive: false }).slice(0, 3);
    if (top.some((hit) => hit.ref === output.ref)) result.inTop3++;
  });
  const byPath = new Map<string, Set<string>>();
  for (const output of outputs) {
    const file = FILE_TOOLS.has(output.record.toolName) ? callPath(output.record.args) : undefined;
    if (file !== undefined) (byPath.get(file) ?? byPath.set(file, new Set()).get(file)!).add(output.ref);
  }
  for (const [file, refs] of byPath) {
    result.paths++;
    const found = new Set(rank(outputs, { kind: "literal", text: file, caseSensitive: false }).map((hit) => hit.ref));
    if ([...refs].every((ref) => found.has(ref))) result.pathsFoundWhole++;
  }
  return result;
}

/** Coverage and cost of the maps in a rendered context. */
export function measureMapCoverage(rendered: readonly AgentMessage[], outputs: readonly ArchivedOutput[]): MapCoverage {
  const byRef = new Map(outputs.map((output) => [output.ref, output]));
  const coverage: MapCoverage = { chains: 0, uncut: 0, fileCalls: 0, fileCallsOnOneLine: 0, mapChars: 0, mappedChars: 0 };
  for (const message of rendered) {
    const text = message.role === "user" ? firstText(message) : undefined;
    if (text === undefined || !text.startsWith("<compressed-chain")) continue;
    coverage.chains++;
    const refs = /tools="([^"]*)"/.exec(text)![1]!.split(",").filter(Boolean);
    const mapStart = text.indexOf(MAP_HEADER);
    const map = mapStart === -1 ? "" : text.slice(mapStart, text.indexOf("\n</compressed-chain>", mapStart));
    coverage.mapChars += map.length;
    for (const ref of refs) coverage.mappedChars += byRef.get(ref)?.record.spillBytes ?? byRef.get(ref)?.text.length ?? 0;
    if (map === "" || / not listed; /.test(map)) continue;
    coverage.uncut++;
    const lines = map.split("\n");
    for (const ref of refs) {
      const output = byRef.get(ref);
      const file = output && FILE_TOOLS.has(output.record.toolName) ? callPath(output.record.args) : undefined;
      if (file === undefined) continue;
      coverage.fileCalls++;
      const name = path.basename(file);
      if (lines.some((line) => line.split(" ").some((word) => word === ref || word === `${ref}!`) && line.includes(name))) coverage.fileCallsOnOneLine++;
    }
  }
  return coverage;
}

function firstText(message: AgentMessage): string | undefined {
  const content = (message as { content?: unknown }).content;
  if (typeof content === "string") return content;
  const first = Array.isArray(content) ? content.find((part) => part?.type === "text") : undefined;
  return typeof first?.text === "string" ? first.text : undefined;
}
