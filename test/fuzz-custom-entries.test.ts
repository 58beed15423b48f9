// Issue 11 item 3, fuzzed: the custom entries chainpress wrote (backfilled index, deterministic
// chain entries) and those upstream writes (per-batch summary custom_message, normal index,
// dedup alias, covered chain entry) get wrong types, missing fields and huge values. Loading,
// rendering, stats and compact must never throw (a typed refusal of the FILE is the only accepted
// error), and every chain entry the mutations did not touch must still be in force.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pruneOptionsOf } from "../src/cli/read-model.js";
import { DEFAULT_SETTINGS } from "../src/core/settings.js";
import { sessionStats } from "../src/cli/session-stats.js";
import { SessionFileError } from "../src/io/session-errors.js";
import { createChainRunner } from "../src/main/chain-runner.js";
import { compactSession } from "../src/main/compact-session.js";
import { renderContext } from "../src/main/context-size.js";
import { loadSessionModel } from "../src/main/session-model.js";
import { smallSessionLines } from "./helpers/cli-harness.js";

const RUNS = Number(process.env.CHAINPRESS_FUZZ_RUNS ?? "300");
const runner = createChainRunner(0);
const root = fs.mkdtempSync(path.join(os.tmpdir(), "chainpress-fuzz-custom-"));
afterAll(async () => {
  await runner.close();
  fs.rmSync(root, { recursive: true, force: true });
});

type Json = Record<string, any>;

/**
 * Five chains; the fifth is covered by an upstream per-batch summary (with its normal index entry
 * and a dedup alias), the first four are compressed by chainpress. Returns the compacted lines.
 */
let baseLines: Json[] = [];
beforeAll(async () => {
  const lines = smallSessionLines({ chains: 5 }).map((text) => JSON.parse(text) as Json);
  const results = lines.filter((l) => l.message?.role === "toolResult" && String(l.message.toolCallId).startsWith("call_4_"));
  const refs = results.map((l, i) => ({ shortId: `t${90 + i}`, toolCallId: l.message.toolCallId, resultTimestamp: l.message.timestamp }));
  let parentId = lines.at(-1)!.id as string;
  const add = (entry: Json): void => {
    const id = `u${lines.length}`;
    lines.push({ ...entry, id, parentId, timestamp: "2026-01-02T00:00:00.000Z" });
    parentId = id;
  };
  add({
    type: "custom",
    customType: "context-prune-index",
    data: { toolCalls: results.map((l) => ({ toolCallId: l.message.toolCallId, toolName: "bash", args: {}, resultText: l.message.content[0].text, isError: false, turnIndex: 3, timestamp: l.message.timestamp, resultTimestamp: l.message.timestamp })) },
  });
  add({ type: "custom_message", customType: "context-prune-summary", content: "ran two echoes", display: false, details: { toolCallRefs: refs, toolNames: ["bash"], turnIndex: 3, timestamp: 1 } });
  add({ type: "custom", customType: "context-prune-dedup-alias", data: { newToolCallId: "call_3_1", originalToolCallId: "call_4_0", newResultTimestamp: 1, originalResultTimestamp: refs[0]!.resultTimestamp } });
  const file = path.join(root, "base.jsonl");
  fs.writeFileSync(file, `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
  const report = await compactSession({ file, runner });
  expect(report.compressed).toHaveLength(5);
  baseLines = fs.readFileSync(file, "utf8").trim().split("\n").map((text) => JSON.parse(text) as Json);
});

const CUSTOM_TYPES = ["context-prune-index", "context-prune-chain", "context-prune-summary", "context-prune-dedup-alias"];

/** Fields of our and upstream's entries, relative to the entry. */
const FIELDS: Array<Array<string | number>> = [
  ["data"],
  ["data", "blockId"],
  ["data", "startUserTimestamp"],
  ["data", "droppedToolCallIds"],
  ["data", "droppedToolCallIds", 0],
  ["data", "finalAssistantTimestamp"],
  ["data", "toolRefs"],
  ["data", "toolRefs", 0],
  ["data", "compressedAt"],
  ["data", "rangeSummaryText"],
  ["data", "bodySource"],
  ["data", "protectedToolCallIds"],
  ["data", "droppedOccurrenceKeys"],
  ["data", "droppedOccurrenceKeys", 0],
  ["data", "toolCalls"],
  ["data", "toolCalls", 0],
  ["data", "toolCalls", 0, "toolCallId"],
  ["data", "toolCalls", 0, "toolName"],
  ["data", "toolCalls", 0, "args"],
  ["data", "toolCalls", 0, "resultText"],
  ["data", "toolCalls", 0, "isError"],
  ["data", "toolCalls", 0, "turnIndex"],
  ["data", "toolCalls", 0, "timestamp"],
  ["data", "toolCalls", 0, "resultTimestamp"],
  ["data", "toolCalls", 0, "spillPath"],
  ["data", "toolCalls", 0, "spillBytes"],
  ["data", "toolCalls", 0, "resultPreview"],
  ["data", "toolCalls", 0, "contentHash"],
  ["data", "backfilled"],
  ["data", "refs"],
  ["data", "refs", 0],
  ["data", "refs", 0, "shortId"],
  ["data", "refs", 0, "toolCallId"],
  ["data", "refs", 0, "resultTimestamp"],
  ["data", "newToolCallId"],
  ["data", "originalToolCallId"],
  ["data", "newResultTimestamp"],
  ["content"],
  ["details"],
  ["details", "toolCallRefs"],
  ["details", "toolCallRefs", 0],
  ["details", "toolCallRefs", 0, "shortId"],
  ["details", "toolCallRefs", 0, "resultTimestamp"],
  ["details", "toolCallIds"],
];

const HUGE = "x".repeat(200_000);
const VALUES: unknown[] = [
  null, 0, -1, 1e308, -1e308, 2 ** 53 + 1, 8.64e15 + 1, "", "x", HUGE, [], {}, true, [1, "a"], [null], { a: 1 },
  `t${"9".repeat(30)}`, `b${"9".repeat(30)}`, "t9007199254740993", Array.from({ length: 5000 }, (_, i) => `id${i}`),
];

type Mutation = { entry: number; field: Array<string | number>; value: unknown; remove: boolean };
const mutation: fc.Arbitrary<Mutation> = fc.record({
  entry: fc.nat(),
  field: fc.constantFrom(...FIELDS),
  value: fc.constantFrom(...VALUES),
  remove: fc.boolean(),
});

function setField(target: Json, keys: Array<string | number>, value: unknown, remove: boolean): boolean {
  let node: any = target;
  for (const key of keys.slice(0, -1)) {
    if (node === null || typeof node !== "object" || !(key in node)) return false;
    node = node[key];
  }
  if (node === null || typeof node !== "object") return false;
  const last = keys.at(-1)!;
  if (remove) delete node[last];
  else node[last] = structuredClone(value);
  return true;
}

let caseNo = 0;

async function checkCase(mutations: Mutation[]): Promise<void> {
  const lines = structuredClone(baseLines);
  const targets = lines.filter((l) => CUSTOM_TYPES.includes(l.customType));
  const touched = new Set<Json>();
  for (const m of mutations) {
    const target = targets[m.entry % targets.length]!;
    if (setField(target, m.field, m.value, m.remove)) touched.add(target);
  }
  const intact = lines.filter((l) => l.customType === "context-prune-chain" && !touched.has(l)).map((l) => l.data.startUserTimestamp as number);
  const file = path.join(root, `c${caseNo++}.jsonl`);
  fs.writeFileSync(file, `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
  try {
    const model = await loadSessionModel(file);
    for (const start of intact) expect(model.state.chains.has(start), `untouched chain ${start} still in force`).toBe(true);
    renderContext(model);
    sessionStats(model, pruneOptionsOf({}, DEFAULT_SETTINGS));
    try {
      await compactSession({ file, runner, options: { rollingWindow: 0 } });
    } catch (error) {
      if (!(error instanceof SessionFileError)) throw error;
      return;
    }
    renderContext(await loadSessionModel(file));
  } finally {
    fs.rmSync(file, { force: true });
    fs.rmSync(path.join(root, "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee-blobs"), { recursive: true, force: true });
  }
}

describe("fuzzed custom entries (ours and upstream's)", () => {
  it(`${RUNS} mutated sessions: load, render, stats and compact never throw, untouched chains stay in force`, async () => {
    await fc.assert(fc.asyncProperty(fc.array(mutation, { minLength: 1, maxLength: 3 }), checkCase), { numRuns: RUNS });
  }, 300_000);
});
