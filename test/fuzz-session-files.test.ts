// Fuzzing the whole compaction pipeline with fast-check. Sessions are generated from a small
// model of chains (nasty tool-call ids, odd outputs, huge strings, lone surrogates, existing
// chainpress entries with garbage data), then mutated: lines cut short, invalid JSON, wrong
// types in the fields the reader, reconstruction and chain detection touch, missing and
// duplicated ids, cyclic parentIds, duplicate timestamps, invalid UTF-8 bytes, glued lines,
// BOM, CRLF. Each case runs compactSession in-process (inline runner) in its own folder:
//   - it either refuses with a SessionFileError (and the input is byte-identical) or succeeds;
//     any other exception is a bug;
//   - nothing is written outside `<dir>/<sanitised session id>-blobs/` and the session file;
//   - on success the file still reads, every record it archived comes back byte-exact (spill
//     files digest-verified) as the original tool output, and no occurrence is indexed twice,
//     even after a second run.
// `npm test` runs CHAINPRESS_FUZZ_RUNS (default 1000) cases; `npm run test:stress` 10,000.
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it, onTestFinished } from "vitest";
import { loadHasher } from "../src/core/digest.js";
import { findRecords } from "../src/core/query.js";
import { sanitizeForFileName } from "../src/core/spill-layout.js";
import { readSession } from "../src/io/read-session.js";
import { resolveRecordBody } from "../src/io/read-spill.js";
import { SessionFileError } from "../src/io/session-errors.js";
import { createChainRunner } from "../src/main/chain-runner.js";
import { compactSession } from "../src/main/compact-session.js";
import { renderContext } from "../src/main/context-size.js";
import { loadSessionModel } from "../src/main/session-model.js";
import { addFigure } from "./helpers/stress-figures.js";

const RUNS = Number(process.env.CHAINPRESS_FUZZ_RUNS ?? "1000");
const SPILL_THRESHOLD = 64;
const runner = createChainRunner(0);
const root = fs.mkdtempSync(path.join(os.tmpdir(), "chainpress-fuzz-"));
afterAll(async () => {
  await runner.close();
  fs.rmSync(root, { recursive: true, force: true });
});

// ----------------------------------------------------------------------------------- model

const NASTY_IDS = [
  "../escape",
  "../../../../tmp/chainpress-fuzz-escape",
  "a/b",
  "/abs/path",
  "nul\u0000id",
  "x".repeat(300),
  "",
  "\uD800lone",
  "..",
  ".",
  "id with spaces",
  "ü∂中\u{1F600}",
  "a@123",
  "@5",
  "t1",
  "C:\\win\\x",
  "%2e%2e%2f",
  ".tmp-1-2-x",
];

const toolCallId = fc.oneof({ weight: 4, arbitrary: fc.constantFrom("call_1", "call_2", "call_3", "call_4") }, { weight: 3, arbitrary: fc.constantFrom(...NASTY_IDS) }, { weight: 1, arbitrary: fc.string({ maxLength: 12 }) });

const oddText = fc.constantFrom("\uD800", "a\uDC00b", "\u0000", "\r\n", "\u2028\u2029", "\uFEFFbom", '"}{"type":"message"', "\n\n", "é".repeat(40));

const output = fc.oneof(
  { weight: 5, arbitrary: fc.string({ maxLength: 120 }) },
  { weight: 3, arbitrary: fc.string({ unit: "binary", minLength: 40, maxLength: 300 }) },
  { weight: 2, arbitrary: fc.array(oddText, { minLength: 1, maxLength: 4 }).map((parts) => parts.join("")) },
  // Huge outputs are rare: each one costs real I/O.
  { weight: 1, arbitrary: fc.integer({ min: 20_000, max: 300_000 }).map((n) => "lorem é ".repeat(Math.ceil(n / 8)).slice(0, n)) },
);

const call = fc.record({
  id: toolCallId,
  name: fc.oneof({ weight: 5, arbitrary: fc.constantFrom("bash", "read", "edit", "grep") }, { weight: 1, arbitrary: fc.constantFrom("", "../tool", "x".repeat(300), "context_tree_query") }),
  args: fc.oneof(fc.constant({ command: "ls" }), fc.constant({ path: "/work/skills/a/SKILL.md" }), fc.jsonValue({ maxDepth: 2 })),
  output,
  /** 0: one text part, 1: string content, 2: two text parts and an image. */
  shape: fc.constantFrom(0, 0, 0, 1, 2),
  isError: fc.boolean(),
  /** The result never arrives (an interrupted or orphaned call). */
  missingResult: fc.nat(9).map((n) => n === 0),
});

const chain = fc.record({
  prompt: fc.string({ maxLength: 30 }),
  turns: fc.array(fc.array(call, { minLength: 1, maxLength: 2 }), { minLength: 0, maxLength: 3 }),
  closed: fc.constantFrom(true, true, true, false),
});

const CHAINPRESS_TYPES = ["context-prune-index", "context-prune-chain", "context-prune-dedup-alias", "context-prune-summary", "context-prune-diagnostic"];
const existingEntry = fc.record({
  customType: fc.constantFrom(...CHAINPRESS_TYPES),
  after: fc.nat(),
  data: fc.oneof(
    fc.jsonValue({ maxDepth: 3 }),
    fc.record({
      toolCalls: fc.array(
        fc.record({ toolCallId, toolName: fc.constantFrom("bash", 5 as never), resultText: fc.oneof(fc.string(), fc.constant(null)), resultTimestamp: fc.oneof(fc.nat(), fc.constant("x")), spillPath: fc.constantFrom(undefined, "/etc/passwd", "../x.txt") }, { requiredKeys: ["toolCallId"] }),
        { maxLength: 3 },
      ),
      backfilled: fc.constantFrom(true, undefined),
      refs: fc.array(fc.record({ shortId: fc.constantFrom("t1", "t2", "t99", "x"), toolCallId, resultTimestamp: fc.nat() }), { maxLength: 2 }),
    }),
    fc.record({ blockId: fc.constantFrom("b1", "b2", ""), startUserTimestamp: fc.oneof(fc.nat(), fc.constant("x")), toolRefs: fc.array(fc.constantFrom("t1", "t2")), rangeSummaryText: fc.string() }, { requiredKeys: [] }),
  ),
});

const session = fc.record({
  version: fc.constantFrom(3, 3, 3, 3, 2, 1),
  sessionId: fc.oneof({ weight: 4, arbitrary: fc.constant("f0220000-0000-4000-8000-000000000000") }, { weight: 1, arbitrary: fc.constantFrom("../../evil", "a/b", "", "x".repeat(300), "nul\u0000") }),
  chains: fc.array(chain, { minLength: 1, maxLength: 5 }),
  existing: fc.array(existingEntry, { maxLength: 2 }),
});

// ------------------------------------------------------------------------------ mutations

const WRONG_VALUES: unknown[] = [null, 0, -1, 1e308, 2 ** 53 + 1, "", "x", "../x", [], {}, true, [1, "a"], { a: 1 }];
const wrongValue = fc.constantFrom(...WRONG_VALUES);

/** Fields the reader, reconstruction and chain detection read. */
const PATHS: Array<Array<string | number>> = [
  ["type"],
  ["id"],
  ["parentId"],
  ["timestamp"],
  ["version"],
  ["message"],
  ["message", "role"],
  ["message", "content"],
  ["message", "content", 0],
  ["message", "content", 0, "type"],
  ["message", "content", 0, "text"],
  ["message", "content", 0, "id"],
  ["message", "content", 0, "name"],
  ["message", "content", 0, "arguments"],
  ["message", "content", 0, "input"],
  ["message", "content", 0, "args"],
  ["message", "content", 1],
  ["message", "content", 1, "id"],
  ["message", "content", 1, "type"],
  ["message", "toolCallId"],
  ["message", "toolName"],
  ["message", "timestamp"],
  ["message", "isError"],
  ["message", "stopReason"],
  ["customType"],
  ["data"],
  ["data", "toolCalls"],
  ["data", "toolCalls", 0],
  ["data", "toolCalls", 0, "toolCallId"],
  ["data", "toolCalls", 0, "toolName"],
  ["data", "toolCalls", 0, "resultText"],
  ["data", "toolCalls", 0, "resultTimestamp"],
  ["data", "toolCalls", 0, "spillPath"],
  ["data", "toolCalls", 0, "spillBytes"],
  ["data", "toolCalls", 0, "spillDigest"],
  ["data", "backfilled"],
  ["data", "refs"],
  ["data", "refs", 0, "shortId"],
  ["data", "refs", 0, "toolCallId"],
  ["data", "blockId"],
  ["data", "startUserTimestamp"],
  ["data", "finalAssistantTimestamp"],
  ["data", "toolRefs"],
  ["data", "droppedToolCallIds"],
  ["data", "droppedOccurrenceKeys"],
  ["data", "rangeSummaryText"],
  ["data", "newToolCallId"],
  ["data", "originalToolCallId"],
  ["content"],
  ["details"],
  ["details", "toolCallRefs"],
  ["details", "toolCallIds"],
];

type Mutation =
  | { kind: "set"; entry: number; path: Array<string | number>; value: unknown }
  | { kind: "delete"; entry: number; path: Array<string | number> }
  | { kind: "dupId"; a: number; b: number }
  | { kind: "cycle"; a: number; b: number }
  | { kind: "dupTimestamp"; a: number; b: number }
  | { kind: "truncate"; line: number; at: number }
  | { kind: "garbage"; line: number; text: string }
  | { kind: "badUtf8"; line: number; at: number; bytes: readonly number[] }
  | { kind: "join"; line: number }
  | { kind: "blank"; line: number }
  | { kind: "bom" }
  | { kind: "crlf" }
  | { kind: "noFinalNewline" };

const objectMutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant("set" as const), entry: fc.nat(), path: fc.constantFrom(...PATHS), value: wrongValue }),
  fc.record({ kind: fc.constant("delete" as const), entry: fc.nat(), path: fc.constantFrom(...PATHS) }),
  fc.record({ kind: fc.constant("dupId" as const), a: fc.nat(), b: fc.nat() }),
  fc.record({ kind: fc.constant("cycle" as const), a: fc.nat(), b: fc.nat() }),
  fc.record({ kind: fc.constant("dupTimestamp" as const), a: fc.nat(), b: fc.nat() }),
);

const byteMutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant("truncate" as const), line: fc.nat(), at: fc.nat() }),
  fc.record({ kind: fc.constant("garbage" as const), line: fc.nat(), text: fc.constantFrom("{", "not json", '{"type":', "[]", "null", '{"type":"message"}', '{"id":"x"}', '"str"', "{}") }),
  fc.record({ kind: fc.constant("badUtf8" as const), line: fc.nat(), at: fc.nat(), bytes: fc.constantFrom([0xff], [0xc3], [0xed, 0xa0, 0x80], [0xc0, 0xaf], [0xf8, 0x88, 0x80, 0x80, 0x80], [0xe2, 0x82]) }),
  fc.record({ kind: fc.constant("join" as const), line: fc.nat() }),
  fc.record({ kind: fc.constant("blank" as const), line: fc.nat() }),
  fc.constant({ kind: "bom" as const }),
  fc.constant({ kind: "crlf" as const }),
  fc.constant({ kind: "noFinalNewline" as const }),
);

/** Zero mutations about a third of the time, so valid sessions (the success path) are well covered. */
const mutations = fc.tuple(fc.array(objectMutation, { maxLength: 3 }), fc.array(byteMutation, { maxLength: 2 }), fc.nat(2)).map(([o, b, keep]) =>
  keep === 0 ? [] : [...o, ...b],
);

type Json = Record<string, any>;
type Model = typeof session extends fc.Arbitrary<infer T> ? T : never;

/** The session's lines as objects (header first), linked and time-stamped like pi writes them. */
function buildEntries(model: Model): Json[] {
  const header: Json = { type: "session", ...(model.version === 1 ? {} : { version: model.version }), id: model.sessionId, timestamp: "2026-02-01T00:00:00.000Z", cwd: "/work/proj" };
  const entries: Json[] = [];
  let clock = Date.UTC(2026, 1, 1);
  let parentId: string | null = null;
  const add = (body: Json): void => {
    const id = (entries.length + 1).toString(16).padStart(8, "0");
    const entry: Json = model.version === 1 ? { ...body, timestamp: new Date(clock).toISOString() } : { ...body, id, parentId, timestamp: new Date(clock).toISOString() };
    entries.push(entry);
    parentId = id;
  };
  const message = (m: Json): void => {
    clock += 1;
    add({ type: "message", message: { ...m, timestamp: clock } });
  };
  const existing = [...model.existing];
  model.chains.forEach((c, ci) => {
    message({ role: "user", content: [{ type: "text", text: c.prompt }] });
    for (const turn of c.turns) {
      message({ role: "assistant", content: turn.map((k) => ({ type: "toolCall", id: k.id, name: k.name, arguments: k.args })), stopReason: "toolUse" });
      for (const k of turn) {
        if (k.missingResult) continue;
        const content = k.shape === 1 ? k.output : k.shape === 2 ? [{ type: "text", text: k.output }, { type: "image", data: "AA==", mimeType: "image/png" }, { type: "text", text: "tail" }] : [{ type: "text", text: k.output }];
        message({ role: "toolResult", toolCallId: k.id, toolName: k.name, content, isError: k.isError });
      }
    }
    if (c.closed) message({ role: "assistant", content: [{ type: "text", text: `done ${ci}` }], stopReason: "stop" });
    for (const e of existing.filter((x) => x.after % model.chains.length === ci)) {
      add(e.customType === "context-prune-summary" ? { type: "custom_message", customType: e.customType, content: "summary", display: false, details: e.data } : { type: "custom", customType: e.customType, data: e.data });
    }
  });
  return [header, ...entries];
}

function setPath(target: Json, keys: Array<string | number>, value: unknown, remove: boolean): void {
  let node: any = target;
  for (const key of keys.slice(0, -1)) {
    if (node === null || typeof node !== "object" || !(key in node)) return;
    node = node[key];
  }
  if (node === null || typeof node !== "object") return;
  const last = keys.at(-1)!;
  if (remove) delete node[last];
  else node[last] = value;
}

/** An entry where the field's parent exists, so every field mutation lands somewhere (the nat picks which). */
function entryWith(lines: Json[], keys: Array<string | number>, pick: number): Json {
  const has = lines.filter((line) => {
    let node: any = line;
    for (const key of keys.slice(0, -1)) {
      if (node === null || typeof node !== "object" || !(key in node)) return false;
      node = node[key];
    }
    return node !== null && typeof node === "object";
  });
  return has.length > 0 ? has[pick % has.length]! : lines[pick % lines.length]!;
}

function applyObjectMutation(lines: Json[], m: Mutation): void {
  const n = lines.length;
  const entryAt = (i: number): Json => lines[i % n]!;
  switch (m.kind) {
    case "set":
      setPath(entryWith(lines, m.path, m.entry), m.path, structuredClone(m.value), false);
      break;
    case "delete":
      setPath(entryWith(lines, m.path, m.entry), m.path, undefined, true);
      break;
    case "dupId":
      entryAt(m.a).id = entryAt(m.b).id;
      break;
    case "cycle": {
      // An entry's parent becomes itself or a later entry: a cycle on the parentId walk.
      const a = m.a % n;
      const b = a + (m.b % (n - a));
      lines[a]!.parentId = lines[b]!.id;
      break;
    }
    case "dupTimestamp": {
      const a = entryAt(m.a).message;
      const b = entryAt(m.b).message;
      if (a && b && typeof a === "object" && typeof b === "object") a.timestamp = b.timestamp;
      break;
    }
    default:
      break;
  }
}

function applyByteMutations(lines: Buffer[], ms: Mutation[]): Buffer {
  let finalNewline = true;
  let bom = false;
  let crlf = false;
  for (const m of ms) {
    const n = lines.length;
    switch (m.kind) {
      case "truncate": {
        const i = m.line % n;
        lines[i] = lines[i]!.subarray(0, m.at % Math.max(1, lines[i]!.length));
        if (i === n - 1) finalNewline = false; // a torn tail, as a crashed writer leaves it
        break;
      }
      case "garbage":
        lines[m.line % n] = Buffer.from(m.text);
        break;
      case "badUtf8": {
        const i = m.line % n;
        const line = lines[i]!;
        // Inside a JSON string when possible: right after an opening quote.
        const quote = line.indexOf(0x22, m.at % Math.max(1, line.length));
        const at = quote === -1 ? line.length : quote + 1;
        lines[i] = Buffer.concat([line.subarray(0, at), Buffer.from(m.bytes), line.subarray(at)]);
        break;
      }
      case "join": {
        const i = m.line % n;
        if (i + 1 < n) lines.splice(i, 2, Buffer.concat([lines[i]!, lines[i + 1]!]));
        break;
      }
      case "blank":
        lines.splice(m.line % (n + 1), 0, Buffer.from("  "));
        break;
      case "bom":
        bom = true;
        break;
      case "crlf":
        crlf = true;
        break;
      case "noFinalNewline":
        finalNewline = false;
        break;
      default:
        break;
    }
  }
  const eol = Buffer.from(crlf ? "\r\n" : "\n");
  const parts: Buffer[] = bom ? [Buffer.from([0xef, 0xbb, 0xbf])] : [];
  lines.forEach((line, i) => {
    parts.push(line);
    if (i < lines.length - 1 || finalNewline) parts.push(eol);
  });
  return Buffer.concat(parts);
}

const fuzzCase = fc.record({ model: session, mutations }).map(({ model, mutations: ms }) => {
  const lines = buildEntries(model);
  for (const m of ms) applyObjectMutation(lines, m);
  const bytes = applyByteMutations(
    lines.map((l) => Buffer.from(JSON.stringify(l), "utf8")),
    ms,
  );
  // The blob folder is named after the header as it ended up (a mutation may have changed it).
  const headerId = lines[0]!.id;
  const value = { bytes, sessionId: typeof headerId === "string" ? headerId : "", mutations: ms.map((m) => m.kind) };
  // A readable counterexample: the mutations and the file as text, not a byte array.
  return Object.defineProperty(value, fc.toStringMethod, {
    value: () => `mutations ${JSON.stringify(value.mutations)}, ${bytes.length} bytes:\n${bytes.toString("utf8").replace(/(.{300}).{300,}?(?=\n|$)/g, "$1…")}`,
  });
});

// ------------------------------------------------------------------------------ checks

function sha1(bytes: Buffer): string {
  return createHash("sha1").update(bytes).digest("hex");
}

/** Every file under dir → sha1 of its bytes ("dir" for folders). */
function snapshot(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const rel of fs.readdirSync(dir, { recursive: true }) as string[]) {
    const full = path.join(dir, rel);
    const stat = fs.lstatSync(full);
    out.set(String(rel), stat.isDirectory() ? "dir" : sha1(fs.readFileSync(full)));
  }
  return out;
}

/**
 * Every JSON value on the file's lines; a line that does not parse but is several objects glued
 * together (a lost newline) yields each of them, as chainpress keeps them.
 */
function* lenientEntries(bytes: Buffer): Generator<any> {
  for (const raw of bytes.toString("utf8").split("\n")) {
    const line = raw.replace(/^\uFEFF/, "");
    try {
      yield JSON.parse(line);
      continue;
    } catch {
      // maybe glued entries
    }
    const pieces = line.split(/(?<=\})(?=\{"type":)/);
    if (pieces.length < 2) continue;
    try {
      const values = pieces.map((p) => JSON.parse(p));
      yield* values;
    } catch {
      // garbage
    }
  }
}

/** Original tool outputs, read without chainpress: occurrence key → every text found for it. */
function originalTexts(bytes: Buffer): Map<string, string[]> {
  const outputs = new Map<string, string[]>();
  for (const entry of lenientEntries(bytes)) {
    const m = entry?.message;
    if (entry?.type !== "message" || m?.role !== "toolResult" || typeof m.toolCallId !== "string" || typeof m.timestamp !== "number") continue;
    const content = m.content;
    const text = typeof content === "string" ? content : Array.isArray(content) ? content.filter((p: any) => p?.type === "text" && typeof p.text === "string").map((p: any) => p.text).join("\n") : "";
    const key = `${m.toolCallId}@${m.timestamp}`;
    outputs.set(key, [...(outputs.get(key) ?? []), text]);
  }
  return outputs;
}

/** Occurrence key of a raw index record, as reconstruct keys it (a non-number timestamp is dropped). */
function rawKey(record: any): string {
  return typeof record?.resultTimestamp === "number" ? `${record.toolCallId}@${record.resultTimestamp}` : String(record?.toolCallId);
}

/** How many backfilled index records each key has in a file. */
function backfilledKeys(bytes: Buffer): Map<string, number> & { added(before: Map<string, number>): Map<string, number> } {
  const counts = new Map<string, number>();
  for (const entry of lenientEntries(bytes)) {
    if (entry?.type !== "custom" || entry.customType !== "context-prune-index" || entry.data?.backfilled !== true || !Array.isArray(entry.data.toolCalls)) continue;
    for (const record of entry.data.toolCalls) counts.set(rawKey(record), (counts.get(rawKey(record)) ?? 0) + 1);
  }
  return Object.assign(counts, {
    added(before: Map<string, number>): Map<string, number> {
      const out = new Map<string, number>();
      for (const [key, n] of counts) if (n > (before.get(key) ?? 0)) out.set(key, n - (before.get(key) ?? 0));
      return out;
    },
  });
}


function resetCase(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir);
}


const figures = { cases: 0, refused: 0, succeeded: 0, compressed: 0, verified: 0 };
const refusalCodes = new Map<string, number>();
let caseNo = 0;

async function checkCase(input: { bytes: Buffer; sessionId: string }): Promise<void> {
  figures.cases++;
  const dir = path.join(root, `c${caseNo++}`);
  fs.mkdirSync(dir);
  const file = path.join(dir, "session.jsonl");
  fs.writeFileSync(file, input.bytes);
  const before = snapshot(dir);
  const blobDirName = `${sanitizeForFileName(input.sessionId)}-blobs`;
  let keysBefore: Set<string> | undefined;
  try {
    keysBefore = new Set((await loadSessionModel(file)).state.records.keys());
  } catch {
    keysBefore = undefined;
  }

  let error: unknown;
  try {
    const report = await compactSession({ file, runner, options: { spillThreshold: SPILL_THRESHOLD, spillPreviewBytes: 32 } });
    figures.compressed += report.compressed.length;
  } catch (e) {
    error = e;
  }
  const after = snapshot(dir);

  // Nothing is written outside the blob folder and the session file.
  for (const [rel, digest] of after) {
    if (rel === "session.jsonl" || rel === blobDirName || rel.startsWith(`${blobDirName}${path.sep}`)) continue;
    expect.fail(`unexpected file ${JSON.stringify(rel)} (${digest}) after the run`);
  }
  expect(fs.readdirSync(root).length, "nothing escaped into the fuzz root").toBe(caseNo);

  if (error !== undefined) {
    // A refusal: typed, and the input untouched.
    if (!(error instanceof SessionFileError)) throw new Error(`unexpected ${(error as Error)?.name ?? typeof error}: ${(error as Error)?.stack ?? String(error)}`);
    figures.refused++;
    refusalCodes.set(error.code, (refusalCodes.get(error.code) ?? 0) + 1);
    expect(after.get("session.jsonl"), `input changed although the run refused (${error.message})`).toBe(before.get("session.jsonl"));
    resetCase(dir);
    return;
  }
  figures.succeeded++;

  // The result reads back, and every newly archived record is recoverable byte-exact.
  const result = fs.readFileSync(file);
  await readSession(file);
  const model = await loadSessionModel(file);
  const originals = originalTexts(result);
  const hasher = await loadHasher();
  const blobDir = path.join(dir, blobDirName);
  for (const [key, record] of model.state.records) {
    if (keysBefore?.has(key)) continue;
    if (record.spillPath !== undefined) expect(path.dirname(record.spillPath), "spill file inside the blob folder").toBe(blobDir);
    const body = await resolveRecordBody(record, hasher, blobDir);
    if (!body.ok) expect.fail(`${key}: archived body unreadable: ${body.detail}`);
    const candidates = originals.get(key) ?? [];
    expect(candidates, `${JSON.stringify(key)}: recovered body equals the original output`).toContain(body.text);
    figures.verified++;
  }
  // Every record chainpress appended is readable by chainpress (not dropped as malformed).
  for (const key of backfilledKeys(result).added(backfilledKeys(input.bytes)).keys()) {
    if (!model.state.records.has(key)) expect.fail(`${JSON.stringify(key)} was archived but chainpress cannot read the record back`);
  }
  // A second run never indexes an occurrence twice, nor one that was indexed before the first.
  await compactSession({ file, runner, options: { spillThreshold: SPILL_THRESHOLD, spillPreviewBytes: 32 } });
  const added = backfilledKeys(fs.readFileSync(file)).added(backfilledKeys(input.bytes));
  for (const [key, count] of added) {
    expect(count, `${JSON.stringify(key)} indexed ${count} times by chainpress`).toBe(1);
    expect(keysBefore?.has(key) ?? false, `${JSON.stringify(key)} was already indexed before the run`).toBe(false);
  }
  resetCase(dir);
}

describe("lone surrogates in tool outputs", () => {
  // Found by the fuzzer: msgpackr carries strings as UTF-8, so a lone surrogate (an emoji cut in
  // half by a tool's truncation) came back as U+FFFD. Fixed: such slices go to the worker by
  // structured clone, and such outputs are never spilled (UTF-8 files cannot hold them either).
  it("an archived output with a lone surrogate comes back exactly", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "chainpress-surrogate-"));
    onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, "session.jsonl");
    const lines = buildEntries({
      version: 3,
      sessionId: "5a000000-0000-4000-8000-000000000000",
      chains: [{ prompt: "p", turns: [[{ id: "call_1", name: "bash", args: {}, output: `${"padding line\n".repeat(200)}half an emoji: \uD83D`, shape: 0, isError: false, missingResult: false }]], closed: true }],
      existing: [],
    });
    fs.writeFileSync(file, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
    const report = await compactSession({ file, runner });
    expect(report.recordsArchived).toBe(1);
    const [record] = (await loadSessionModel(file)).state.records.values();
    expect(record!.resultText).toBe(`${"padding line\n".repeat(200)}half an emoji: \uD83D`);
  });
});

describe("bugs the fuzzer found: regressions for the fixed ones, `it.fails` pins for the open ones", () => {
  const HEADER = '{"type":"session","version":3,"id":"5b000000-0000-4000-8000-000000000000","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}';
  const line = (id: string, parentId: string | null, message: unknown): string => JSON.stringify({ type: "message", id, parentId, timestamp: "2026-01-01T00:00:01.000Z", message });

  async function compactLines(lines: string[]): Promise<{ file: string; error?: unknown }> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "chainpress-known-"));
    onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, "session.jsonl");
    fs.writeFileSync(file, `${lines.join("\n")}\n`);
    try {
      await compactSession({ file, runner });
      return { file };
    } catch (error) {
      return { file, error };
    }
  }

  // Fixed in 8cdaaa9 (was: session-tree.ts branchMessages pushed `entry.message` unchecked, and
  // message-text.ts isSyntheticChainMessage read `.role` of null → TypeError).
  it("a message entry with `message: null` is skipped with a warning or refused, not a TypeError", async () => {
    const { error } = await compactLines([HEADER, line("a", null, { role: "user", content: "hi", timestamp: 1 }), line("b", "a", null)]);
    expect(error === undefined || error instanceof SessionFileError, String(error)).toBe(true);
  });

  // Fixed in 8cdaaa9 (was: a numeric toolCall id went into the chain entry's droppedToolCallIds,
  // and chain-ranges.ts mismatchReport → bareToolCallId(5) threw on every later compact/render).
  it("a numeric tool-call id does not poison the session", async () => {
    const { file, error } = await compactLines([
      HEADER,
      line("a", null, { role: "user", content: "hi", timestamp: 1 }),
      line("b", "a", { role: "assistant", content: [{ type: "toolCall", id: 5, name: "bash", arguments: {} }], timestamp: 2 }),
      line("c", "b", { role: "toolResult", toolCallId: 5, toolName: "bash", content: [{ type: "text", text: "out" }], isError: false, timestamp: 3 }),
      line("d", "c", { role: "assistant", content: [{ type: "text", text: "done" }], timestamp: 4 }),
    ]);
    expect(error, String(error)).toBeUndefined();
    await compactSession({ file, runner }); // a second run on the result
  });

  // Fixed in 8cdaaa9 (was: extract-records.ts archived the output of a call whose id is "", and
  // reconstruct.ts asRecord dropped that record on every load: archived but unrecoverable).
  it("an output whose tool-call id is empty is either recoverable or not archived", async () => {
    const { file, error } = await compactLines([
      HEADER,
      line("a", null, { role: "user", content: "hi", timestamp: 1 }),
      line("b", "a", { role: "assistant", content: [{ type: "toolCall", id: "ok1", name: "bash", arguments: {} }, { type: "toolCall", id: "", name: "bash", arguments: {} }], timestamp: 2 }),
      line("c", "b", { role: "toolResult", toolCallId: "", toolName: "bash", content: [{ type: "text", text: "out\n".repeat(300) }], isError: false, timestamp: 3 }),
      line("e", "c", { role: "toolResult", toolCallId: "ok1", toolName: "bash", content: [{ type: "text", text: "ok\n".repeat(300) }], isError: false, timestamp: 4 }),
      line("d", "e", { role: "assistant", content: [{ type: "text", text: "done" }], timestamp: 5 }),
    ]);
    expect(error).toBeUndefined();
    expect(backfilledKeys(fs.readFileSync(file)).size).toBeGreaterThan(0);
    const archived = [...backfilledKeys(fs.readFileSync(file)).keys()];
    const readable = [...(await loadSessionModel(file)).state.records.keys()];
    expect(readable).toEqual(archived);
  });

  // Two results with the same toolCallId and the same timestamp (a provider reusing an id in one
  // parallel turn, written in the same millisecond) share one occurrence key, so they cannot both
  // be archived and recovered by ref. Found by the fuzzer (the second shadowed the first); fixed
  // fail-closed in plan-chains.ts: such a chain is not compressed.
  it("two outputs with the same id and timestamp: the chain stays uncompressed, nothing archived or dropped", async () => {
    const { file, error } = await compactLines([
      HEADER,
      line("a", null, { role: "user", content: "hi", timestamp: 1 }),
      line("b", "a", { role: "assistant", content: [{ type: "toolCall", id: "c1", name: "bash", arguments: {} }, { type: "toolCall", id: "c1", name: "bash", arguments: {} }], timestamp: 2 }),
      line("c", "b", { role: "toolResult", toolCallId: "c1", toolName: "bash", content: [{ type: "text", text: "first" }], isError: false, timestamp: 3 }),
      line("d", "c", { role: "toolResult", toolCallId: "c1", toolName: "bash", content: [{ type: "text", text: "second" }], isError: false, timestamp: 3 }),
      line("e", "d", { role: "assistant", content: [{ type: "text", text: "done" }], timestamp: 4 }),
    ]);
    expect(error).toBeUndefined();
    const model = await loadSessionModel(file);
    expect(model.state.chains.size).toBe(0);
    expect(model.state.records.size).toBe(0);
    // Nothing was dropped by compression (the second result is an orphan for pi's pairing rule
    // anyway and is swept by rendering, compressed or not).
    expect(JSON.stringify(renderContext(model))).toContain("first");
  });

  // A retry (the chain's outputs are already indexed, its chain entry is missing) builds the body
  // on the main thread: compress-eligible.ts toItem → plan-chains.ts retryBody →
  // deterministic-body.ts isoOf → `new Date(1e308).toISOString()` throws RangeError, which is not
  // caught per chain, so compactSession (and `chainpress compact`) fails as a whole. The same
  // record on the worker path only skips its chain ("worker failed: Invalid time value").
  it("an indexed record with an out-of-range timestamp costs its chain, not the whole run", async () => {
    const big = 1e308;
    const { error } = await compactLines([
      HEADER,
      line("a", null, { role: "user", content: "hi", timestamp: 1 }),
      line("b", "a", { role: "assistant", content: [{ type: "toolCall", id: "c1", name: "bash", arguments: {} }], timestamp: 2 }),
      line("c", "b", { role: "toolResult", toolCallId: "c1", toolName: "bash", content: [{ type: "text", text: "out" }], isError: false, timestamp: big }),
      line("d", "c", { role: "assistant", content: [{ type: "text", text: "done" }], timestamp: 4 }),
      JSON.stringify({ type: "custom", customType: "context-prune-index", data: { toolCalls: [{ toolCallId: "c1", toolName: "bash", args: {}, resultText: "out", isError: false, turnIndex: 0, timestamp: 5, resultTimestamp: big }] }, id: "e", parentId: "d", timestamp: "2026-01-01T00:00:02.000Z" }),
    ]);
    expect(error, String(error)).toBeUndefined();
  });
});

describe("fuzzed session files through compactSession", () => {
  it(`${RUNS} generated and mutated sessions: a typed refusal or a correct, recoverable result`, async () => {
    await fc.assert(fc.asyncProperty(fuzzCase, checkCase), { numRuns: RUNS });
    addFigure("fuzzCases", figures.cases);
    addFigure("recordsVerified", figures.verified);
    console.log(
      `fuzz: ${figures.cases} cases (incl. shrinking), ${figures.succeeded} compacted (${figures.compressed} chains, ${figures.verified} records verified byte-exact), ` +
        `${figures.refused} refused: ${[...refusalCodes].map(([c, n]) => `${c} ${n}`).join(", ")}`,
    );
    // The id that tries to climb to the temp folder did not get there.
    expect(fs.readdirSync(os.tmpdir()).filter((n) => n.includes("chainpress-fuzz-escape"))).toEqual([]);
    // Both paths are exercised in volume.
    expect(figures.succeeded).toBeGreaterThan(RUNS / 4);
    expect(figures.refused).toBeGreaterThan(RUNS / 20);
    expect(figures.verified).toBeGreaterThan(RUNS / 4);
  }, Math.max(600_000, RUNS * 150));
});
