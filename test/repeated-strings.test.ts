// RepeatedStrings (io/repeated-strings.ts) only swaps strings for equal ones: every entry of a real
// session, and of odd hand-made ones, serialises exactly as it did.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { RepeatedStrings } from "../src/io/repeated-strings.js";
import { classifyLine } from "../src/io/session-line.js";

const dir = path.join(import.meta.dirname, "..", "fixtures", "real-pi-sessions");

function sharedCopy(entries: Array<Record<string, unknown>>): string[] {
  const repeated = new RepeatedStrings();
  const copies = entries.map((entry) => structuredClone(entry));
  copies.forEach((entry, i) => repeated.share(entry, copies[i - 1]));
  return copies.map((entry) => JSON.stringify(entry));
}

describe("RepeatedStrings", () => {
  for (const name of fs.readdirSync(dir).filter((file) => file.endsWith(".jsonl"))) {
    it(`${name}: every entry is the same JSON after sharing`, () => {
      // Lines as the reader classifies them: these files hold glued entries and other damage on purpose.
      const entries = fs.readFileSync(path.join(dir, name), "utf8").split("\n").flatMap((line) => {
        const result = classifyLine(Buffer.from(line), false);
        return result.kind === "value" ? [result.value as Record<string, unknown>] : result.kind === "joined" ? (result.values as Array<Record<string, unknown>>) : [];
      });
      expect(entries.length).toBeGreaterThan(10);
      expect(sharedCopy(entries)).toEqual(entries.map((entry) => JSON.stringify(entry)));
    });
  }

  it("odd entries: no message, a non-string parent, results without a call, calls without ids, a result answering a call twice", () => {
    const entries: Array<Record<string, unknown>> = [
      { type: "session", id: "s" },
      { type: "message", id: "a", parentId: null, message: "not an object" },
      { type: "message", id: "b", parentId: 7, message: { role: "assistant", content: [{ type: "toolCall", name: "read", arguments: { path: 3 } }, "x", { type: "toolCall", id: "c1", arguments: { path: "/p" } }] } },
      { type: "message", id: "c", parentId: "b", message: { role: "toolResult", toolCallId: "c1", toolName: "read", content: [] } },
      { type: "message", id: "d", parentId: "c", message: { role: "toolResult", toolCallId: "c1", toolName: "read", content: [] } },
      { type: "message", id: "e", parentId: "zz", message: { role: "toolResult", toolCallId: 5, model: 1, content: "t" } },
      { type: "message", id: "f", message: { role: "assistant", content: "text", model: "m", api: "a", provider: "p" } },
    ];
    expect(sharedCopy(entries)).toEqual(entries.map((entry) => JSON.stringify(entry)));
  });
});
