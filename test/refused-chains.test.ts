// Issue 11 items 6 and 9: a chain whose own data rules out a correct result (an impossible record
// time, two outputs under one occurrence key) is a reported, permanent skip: a `backfill-skipped`
// diagnostic in the session, a warning, and exit 0, on the first run and on every later one.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBuilt, jsonLines, removeTempDirs, runCli, settle, tempDir } from "./helpers/cli-harness.js";

beforeAll(ensureBuilt, 180_000);
afterAll(removeTempDirs);

const HEADER = { type: "session", version: 3, id: "6b000000-0000-4000-8000-000000000000", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/p" };

/** Chain 1 is healthy; chain 2's tool result carries `badResult` fields; extra entries go last. */
function writeSession(badResult: Record<string, unknown>, extra: unknown[] = []): string {
  const lines: unknown[] = [HEADER];
  let parentId: string | null = null;
  let n = 0;
  const add = (message: Record<string, unknown>): void => {
    const id = `e${++n}`;
    lines.push({ type: "message", id, parentId, timestamp: "2026-01-01T00:00:01.000Z", message });
    parentId = id;
  };
  add({ role: "user", content: "one", timestamp: 10 });
  add({ role: "assistant", content: [{ type: "toolCall", id: "ok1", name: "bash", arguments: {} }], timestamp: 11 });
  add({ role: "toolResult", toolCallId: "ok1", toolName: "bash", content: [{ type: "text", text: "fine\n".repeat(200) }], isError: false, timestamp: 12 });
  add({ role: "assistant", content: [{ type: "text", text: "done one" }], timestamp: 13 });
  add({ role: "user", content: "two", timestamp: 20 });
  add({ role: "assistant", content: [{ type: "toolCall", id: "c1", name: "bash", arguments: {} }, { type: "toolCall", id: "c1", name: "bash", arguments: {} }], timestamp: 21 });
  add({ role: "toolResult", toolCallId: "c1", toolName: "bash", content: [{ type: "text", text: "first" }], isError: false, timestamp: 22, ...badResult });
  add({ role: "assistant", content: [{ type: "text", text: "done two" }], timestamp: 24 });
  for (const entry of extra) lines.push({ ...(entry as object), parentId, id: `x${++n}` });
  const file = path.join(tempDir(), "s.jsonl");
  fs.writeFileSync(file, `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
  settle(file);
  return file;
}

function diagnostics(file: string): Array<{ kind: string; detail: string }> {
  return jsonLines(file).filter((e) => e.customType === "context-prune-diagnostic").map((e) => e.data as { kind: string; detail: string });
}

function expectPermanentSkip(file: string, reason: RegExp): void {
  for (let run = 0; run < 2; run++) {
    settle(file);
    const result = runCli(["compact", file, "--workers", "0"]);
    expect(result.status, result.stderr + result.out).toBe(0);
    expect(result.out).toMatch(/warning: chain 20 left uncompressed for good: /);
    expect(result.out).toMatch(reason);
  }
  const chains = jsonLines(file).filter((e) => e.customType === "context-prune-chain").map((e) => (e.data as { startUserTimestamp: number }).startUserTimestamp);
  expect(chains).toEqual([10]);
  const skipped = diagnostics(file).filter((d) => d.kind === "backfill-skipped");
  expect(skipped.length).toBeGreaterThanOrEqual(1);
  expect(skipped[0]!.detail).toMatch(/^start=20 reason=/);
}

describe("a chain refused for good", () => {
  it("a tool result with an impossible timestamp: exit 0, a warning and a backfill-skipped diagnostic, run after run", () => {
    const file = writeSession({ timestamp: 1e308 });
    expectPermanentSkip(file, /impossible timestamp \(1e\+308\)/);
  });

  it("an archived record with an impossible time (the retry path): the same", () => {
    const record = { toolCallId: "c1", toolName: "bash", args: {}, resultText: "first", isError: false, turnIndex: 0, timestamp: 5, resultTimestamp: 1e308 };
    const file = writeSession({ timestamp: 1e308 }, [{ type: "custom", customType: "context-prune-index", data: { toolCalls: [record] }, timestamp: "2026-01-01T00:00:02.000Z" }]);
    expectPermanentSkip(file, /archived record c1 has an impossible time/);
  });

  it("two outputs under one occurrence key: no longer a silent skip", () => {
    const lines = (file: string) => fs.readFileSync(file, "utf8");
    const file = writeSession({});
    // A second result for c1 with the same timestamp, before the reply.
    const text = lines(file).split("\n");
    const reply = text.findIndex((l) => l.includes('"done two"'));
    const second = JSON.parse(text[reply - 1]!) as Record<string, any>;
    second.parentId = second.id;
    second.id = "dup";
    second.message.content = [{ type: "text", text: "second" }];
    const replyEntry = JSON.parse(text[reply]!) as Record<string, any>;
    replyEntry.parentId = "dup";
    text.splice(reply, 1, JSON.stringify(second), JSON.stringify(replyEntry));
    fs.writeFileSync(file, text.join("\n"));
    expectPermanentSkip(file, /two outputs share an occurrence key/);
  });
});
