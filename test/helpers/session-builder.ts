/**
 * Builds small but real pi v3 session files for tests: header, message entries with ids and
 * parentIds, chains of tool calls with results, closing replies. Timestamps are unique and
 * increasing so spans resolve.
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";

export interface CallSpec {
  id: string;
  name: string;
  args?: unknown;
  output: string;
  isError?: boolean;
}

export class SessionBuilder {
  readonly lines: unknown[] = [];
  private lastId: string | null = null;
  private nextEntry = 1;
  /** Message timestamps (ms), strictly increasing. */
  clock = Date.UTC(2026, 7, 14, 10, 0, 0);

  constructor(readonly sessionId = "11111111-2222-4333-8444-555555555555") {
    this.lines.push({ type: "session", version: 3, id: sessionId, timestamp: "2026-08-14T10:00:00.000Z", cwd: "/work/proj" });
  }

  private entry(body: Record<string, unknown>): string {
    const id = (this.nextEntry++).toString(16).padStart(8, "0");
    this.lines.push({ type: body.type, id, parentId: this.lastId, timestamp: new Date(this.clock).toISOString(), ...body });
    this.lastId = id;
    return id;
  }

  tick(ms = 10): number {
    this.clock += ms;
    return this.clock;
  }

  message(message: Record<string, unknown>): string {
    return this.entry({ type: "message", message });
  }

  user(text: string): number {
    const ts = this.tick();
    this.message({ role: "user", content: [{ type: "text", text }], timestamp: ts });
    return ts;
  }

  /** One assistant turn with parallel calls, then their results in order. */
  turn(calls: CallSpec[]): number[] {
    this.message({
      role: "assistant",
      content: calls.map((c) => ({ type: "toolCall", id: c.id, name: c.name, arguments: c.args ?? {} })),
      stopReason: "toolUse",
      timestamp: this.tick(),
    });
    return calls.map((c) => {
      const ts = this.tick();
      this.message({ role: "toolResult", toolCallId: c.id, toolName: c.name, content: [{ type: "text", text: c.output }], isError: c.isError === true, timestamp: ts });
      return ts;
    });
  }

  reply(text: string): number {
    const ts = this.tick();
    this.message({ role: "assistant", content: [{ type: "text", text }], stopReason: "stop", timestamp: ts });
    return ts;
  }

  /** A closed chain: user, one call per turn, closing reply. Returns its start timestamp. */
  chain(prompt: string, calls: CallSpec[]): number {
    const start = this.user(prompt);
    for (const call of calls) this.turn([call]);
    this.reply(`done: ${prompt}`);
    return start;
  }

  custom(customType: string, data: unknown): string {
    return this.entry({ type: "custom", customType, data });
  }

  customMessage(customType: string, content: string, details: unknown): string {
    return this.entry({ type: "custom_message", customType, content, display: false, details });
  }

  toJsonl(): string {
    return this.lines.map((line) => JSON.stringify(line)).join("\n") + "\n";
  }

  /** Write to `<fresh temp dir>/session.jsonl` and return the path. */
  writeTemp(name = "session.jsonl"): string {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "chainpress-test-"));
    const file = path.join(dir, name);
    fs.writeFileSync(file, this.toJsonl(), { mode: 0o640 });
    return file;
  }
}

/** Calls named `<prefix>_<i>` with outputs of the given size. */
export function calls(prefix: string, count: number, outputChars = 40, name = "bash"): CallSpec[] {
  return Array.from({ length: count }, (_, i) => ({
    id: `${prefix}_${i}`,
    name,
    args: name === "read" ? { path: `src/file${i}.ts` } : { command: `echo ${prefix} ${i}` },
    output: `${prefix} output ${i} `.padEnd(outputChars, "x"),
  }));
}

/** Parse every line of a session file. */
export function readLines(file: string): Array<Record<string, any>> {
  return fs.readFileSync(file, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
}

/** The custom entries of one customType, in file order. */
export function customEntries(file: string, customType: string): Array<Record<string, any>> {
  return readLines(file).filter((l) => l.type === "custom" && l.customType === customType);
}
