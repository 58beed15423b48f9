/**
 * Issue 45: a malformed `context_edit` must not undo a redaction. pi 1.6 applies every edit,
 * whatever its replacement's shape (session-manager.js, projectContextEntry): `null` omits the
 * target, anything else sets a user, assistant, tool-result or custom message's content to
 * `replacement.content`, which for a malformed replacement is never the original. pi 1.6's own
 * loader is the oracle: `chainpress render` gives its context (orphaned tool results swept, as
 * the render's last phase does) for every malformed shape, odd but well-formed ones, edits of
 * every role, non-string targets, the order of edits, a compaction's checkpoint, and a fuzzed set.
 */

import fs from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readSession } from "../src/io/read-session.js";
import { renderContext } from "../src/main/context-size.js";
import { modelOf } from "../src/main/session-model.js";
import { ensureBuilt, removeTempDirs, runCli, tempDir } from "./helpers/cli-harness.js";
import { MALFORMED_REPLACEMENTS, ODD_WELL_FORMED, replacementArb, withOrphansSwept } from "./helpers/edit-shapes.js";
import { piContexts, type PiContextMessage } from "./helpers/pi-loader.js";
import { reduceRendered, renderLines } from "./helpers/render-shape.js";
import { SessionLines } from "./helpers/session-lines.js";

beforeAll(() => ensureBuilt());
afterAll(() => removeTempDirs());

function rendered(file: string): { messages: PiContextMessage[]; out: string } {
  const run = runCli(["render", file]);
  expect(run.status, run.stderr).toBe(0);
  return { messages: renderLines(run.out).map(reduceRendered), out: run.out };
}

const call = (id: string) => ({ type: "toolCall", id, name: "bash", arguments: { command: `run ${id}` } });

/**
 * Two chains and messages of every role; `replacement` edits the first call's assistant (its
 * tool result is then an orphan), the second output, a user message, a reply, a custom message,
 * a system message and an entry that does not exist. Every text an edit targets holds "SECRET-".
 */
function rolesSession(file: string, replacement: unknown): void {
  const s = new SessionLines();
  s.message({ role: "user", content: [{ type: "text", text: "task one" }] });
  const a1 = s.message({ role: "assistant", content: [{ type: "text", text: "SECRET-a1 plan" }, call("c1")], stopReason: "toolUse" });
  s.message({ role: "toolResult", toolCallId: "c1", toolName: "bash", content: [{ type: "text", text: "r1 output" }], isError: false });
  s.reply("one done");
  const u2 = s.message({ role: "user", content: "SECRET-u2 task two" });
  s.message({ role: "assistant", content: [call("c2")], stopReason: "toolUse" });
  const r2 = s.message({ role: "toolResult", toolCallId: "c2", toolName: "bash", content: [{ type: "text", text: "SECRET-r2 output" }], isError: false });
  const f2 = s.reply("SECRET-f2 two done");
  const cm = s.add({ type: "custom_message", customType: "note", content: "SECRET-cm note", display: true });
  const sys = s.message({ role: "system", content: "prompt, never edited by a content replacement" });
  for (const targetId of [a1, r2, u2, f2, cm, sys, "no-such-entry"]) s.add({ type: "context_edit", targetId, replacement });
  s.message({ role: "user", content: "last" });
  s.write(file);
}

/** A tool result edited twice: `first`, then `second` (the latest wins, whatever its shape). */
function orderSession(file: string, first: unknown, second: unknown): void {
  const s = new SessionLines();
  const { resultIds } = s.chain("one", ["SECRET-order output"]);
  s.reply("done");
  s.add({ type: "context_edit", targetId: resultIds[0], replacement: first });
  s.add({ type: "context_edit", targetId: resultIds[0], replacement: second });
  s.write(file);
}

/** Edits whose targetId is not a string: pi's map is keyed by the value itself, so none matches an entry. */
function nonStringTargetsSession(file: string): void {
  const s = new SessionLines();
  const { resultIds } = s.chain("one", ["shown output"]);
  s.reply("shown reply");
  for (const targetId of [5, null, true, [resultIds[0]], { id: resultIds[0] }]) s.add({ type: "context_edit", targetId, replacement: null });
  s.add({ type: "context_edit", targetId: 7, replacement: { content: 42 } });
  s.write(file);
}

/** A compaction whose checkpoint is not a system message, edited: pi edits the checkpoint's content too. */
function checkpointSession(file: string, replacement: unknown): void {
  const s = new SessionLines();
  s.message({ role: "user", content: "before" });
  const reply = s.reply("before done");
  const compaction = s.add({ type: "compaction", summary: "summary", firstKeptEntryId: reply, tokensBefore: 10, systemMessage: { role: "user", content: "SECRET-checkpoint", timestamp: 1 } });
  s.add({ type: "context_edit", targetId: compaction, replacement });
  s.message({ role: "user", content: "after" });
  s.write(file);
}

/** An edit with no replacement key: pi 1.6's projection throws on it when the target is a user, assistant, tool-result or custom message. */
function noReplacementSession(file: string, role: "toolResult" | "system"): void {
  const s = new SessionLines();
  const { resultIds } = s.chain("one", [role === "toolResult" ? "SECRET-missing output" : "unedited output"]);
  const sys = s.message({ role: "system", content: "system prompt" });
  s.reply("done");
  s.add({ type: "context_edit", targetId: role === "system" ? sys : resultIds[0] });
  s.write(file);
}

describe("a malformed context edit, as pi 1.6 projects it", () => {
  let dir: string;
  const cases: Array<{ name: string; file: string }> = [];

  beforeAll(() => {
    dir = tempDir("chainpress-malformed-edits-");
    const add = (name: string, write: (file: string) => void) => {
      const file = path.join(dir, `${cases.length}.jsonl`);
      write(file);
      cases.push({ name, file });
    };
    for (const [name, replacement] of MALFORMED_REPLACEMENTS) add(`every role, ${name}`, (f) => rolesSession(f, replacement));
    for (const [name, replacement] of ODD_WELL_FORMED) add(`every role, ${name}`, (f) => rolesSession(f, replacement));
    add("every role, null", (f) => rolesSession(f, null));
    add("malformed, then well-formed", (f) => orderSession(f, { content: 42 }, { content: "[redacted]" }));
    add("well-formed, then malformed", (f) => orderSession(f, { content: "[redacted]" }, "BARE"));
    add("null, then malformed", (f) => orderSession(f, null, {}));
    add("malformed, then null", (f) => orderSession(f, { content: null }, null));
    add("non-string targetIds", nonStringTargetsSession);
    add("a user-role checkpoint, well-formed edit", (f) => checkpointSession(f, { content: "[redacted]" }));
    add("a user-role checkpoint, malformed edit", (f) => checkpointSession(f, { content: 42 }));
    add("no replacement on a system message", (f) => noReplacementSession(f, "system"));
  });

  it("chainpress's render is pi 1.6's context, and shows no text the edits hid", async () => {
    const pi = await piContexts("1.6.0", cases.map((c) => c.file));
    for (const [i, { name, file }] of cases.entries()) {
      const { messages, out } = rendered(file);
      expect(messages, name).toEqual(withOrphansSwept(pi[i]!));
      // The oracle really hides them: no edited text reaches pi's model, nor chainpress's render.
      expect(JSON.stringify(pi[i]), name).not.toContain("SECRET-");
      expect(out, name).not.toContain("SECRET-");
    }
    // The sessions exercise what they claim: a malformed edit keeps the message, without content.
    const bare = pi[cases.findIndex((c) => c.name === 'every role, "BARE"')]!;
    expect(bare.map((m) => `${m.role}:${m.text}`)).toEqual(["user:task one", "assistant:", "toolResult:r1 output", "assistant:one done", "user:", "assistant:", "toolResult:", "assistant:", "custom:", "system:prompt, never edited by a content replacement", "user:last"]);
    const nonString = pi[cases.findIndex((c) => c.name === "non-string targetIds")]!;
    expect(nonString.map((m) => m.text)).toEqual(["task one", "", "shown output", "shown reply"]);
  }, 120_000);

  it("with no replacement at all pi 1.6 cannot build the context; chainpress shows the target without content", async () => {
    const file = path.join(dir, "no-replacement.jsonl");
    noReplacementSession(file, "toolResult");
    await expect(piContexts("1.6.0", [file])).rejects.toThrow(/reading 'content'/);
    const { messages, out } = rendered(file);
    expect(out).not.toContain("SECRET-");
    expect(messages.map((m) => `${m.role}:${m.text}`)).toEqual(["user:task one", "assistant:", "toolResult:", "system:system prompt", "assistant:done"]);
  }, 60_000);
});

/** One fuzzed session: messages of every role, each text unique and marked, and edits of any shape on any entry. */
type Op =
  | { op: "chain"; calls: number; withText: boolean }
  | { op: "user" | "custom" | "system" | "reply" }
  | { op: "edit"; pick: number; target: "entry" | "missing" | "odd"; oddId: unknown; replacement: unknown };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ op: fc.constant("chain" as const), calls: fc.integer({ min: 1, max: 2 }), withText: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constantFrom("user" as const, "custom" as const, "system" as const, "reply" as const) }) },
  {
    weight: 4,
    arbitrary: fc.record({
      op: fc.constant("edit" as const),
      pick: fc.nat(),
      target: fc.constantFrom("entry" as const, "entry" as const, "entry" as const, "missing" as const, "odd" as const),
      oddId: fc.jsonValue({ maxDepth: 1 }).filter((v) => typeof v !== "string"),
      replacement: replacementArb,
    }),
  },
);

function fuzzSession(file: string, ops: readonly Op[]): void {
  const s = new SessionLines();
  const ids: string[] = [];
  let n = 0;
  const secret = () => `SECRET-${++n}`;
  for (const op of ops) {
    if (op.op === "chain") {
      ids.push(s.message({ role: "user", content: [{ type: "text", text: `${secret()} task` }] }));
      const callIds = Array.from({ length: op.calls }, () => `call${++n}`);
      const text = op.withText ? [{ type: "text", text: `${secret()} plan` }] : [];
      ids.push(s.message({ role: "assistant", content: [...text, ...callIds.map(call)], stopReason: "toolUse" }));
      for (const id of callIds) ids.push(s.message({ role: "toolResult", toolCallId: id, toolName: "bash", content: [{ type: "text", text: `${secret()} output` }], isError: false }));
      ids.push(s.reply(`${secret()} reply`));
    } else if (op.op === "user") ids.push(s.message({ role: "user", content: `${secret()} ask` }));
    else if (op.op === "reply") ids.push(s.reply(`${secret()} says`));
    else if (op.op === "system") ids.push(s.message({ role: "system", content: `${secret()} prompt` }));
    else if (op.op === "custom") ids.push(s.add({ type: "custom_message", customType: "note", content: [{ type: "text", text: `${secret()} note` }], display: false }));
    else {
      const targetId = op.target === "odd" ? op.oddId : op.target === "missing" || ids.length === 0 ? "no-such-entry" : ids[op.pick % ids.length];
      s.add({ type: "context_edit", targetId, replacement: op.replacement });
    }
  }
  s.write(file);
}

/** What `chainpress render` prints for `file`, reduced, made by the render's own functions in this process. */
async function renderedInProcess(file: string): Promise<PiContextMessage[]> {
  const model = modelOf(await readSession(file, { malformedLines: "skip" }));
  return renderContext(model).map((m) => reduceRendered(JSON.parse(JSON.stringify(m)) as Record<string, unknown>));
}

describe("fuzzed edits, as pi 1.6 projects them", () => {
  it("chainpress's render is pi 1.6's context for 160 fuzzed sessions", async () => {
    const dir = tempDir("chainpress-fuzzed-edits-");
    const samples = fc.sample(fc.array(opArb, { minLength: 2, maxLength: 18 }), { numRuns: 160, seed: 45 });
    const files = samples.map((ops, i) => {
      const file = path.join(dir, `${i}.jsonl`);
      fuzzSession(file, ops);
      return file;
    });
    const pi = await piContexts("1.6.0", files);
    let hidden = 0;
    for (const [i, file] of files.entries()) {
      const ours = await renderedInProcess(file);
      expect(ours, `${file}:\n${fs.readFileSync(file, "utf8")}`).toEqual(withOrphansSwept(pi[i]!));
      hidden += pi[i]!.filter((m) => m.text === "").length;
    }
    // The fuzz reaches the case at hand: messages kept with no text (edited away).
    expect(hidden).toBeGreaterThan(50);
  }, 120_000);
});
