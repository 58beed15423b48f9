/**
 * A version-3 session written entry by entry, as pi 1.6 writes one (tool chains, replies, and
 * `context_edit` entries), for tests of how chainpress reads what pi 1.6 writes.
 */

import fs from "node:fs";
import { settle } from "./cli-harness.js";

export const SESSION_ID = "0d1e2f30-aaaa-4bbb-8ccc-0123456789ab";

/** Each `add` returns the new entry's id; the entries form one branch. */
export class SessionLines {
  readonly lines: string[] = [JSON.stringify({ type: "session", version: 3, id: SESSION_ID, timestamp: "2026-11-25T00:00:00.000Z", cwd: "/tmp/p" })];
  private parent: string | null = null;
  private clock = Date.UTC(2026, 10, 25);
  private n = 0;

  add(entry: Record<string, unknown>): string {
    this.clock += 1000;
    const id = `e${(++this.n).toString(16).padStart(7, "0")}`;
    this.lines.push(JSON.stringify({ ...entry, id, parentId: this.parent, timestamp: new Date(this.clock).toISOString() }));
    this.parent = id;
    return id;
  }
  message(message: Record<string, unknown>): string {
    return this.add({ type: "message", message: { ...message, timestamp: this.clock + 1000 } });
  }
  chain(label: string, outputs: string[]): { resultIds: string[] } {
    this.message({ role: "user", content: [{ type: "text", text: `task ${label}` }] });
    const resultIds = outputs.map((output, k) => {
      const id = `${label}_call_${k}`;
      this.message({ role: "assistant", content: [{ type: "toolCall", id, name: "bash", arguments: { command: `run ${label} ${k}` } }], stopReason: "toolUse" });
      return this.message({ role: "toolResult", toolCallId: id, toolName: "bash", content: [{ type: "text", text: output }], isError: false });
    });
    return { resultIds };
  }
  reply(text: string, stopReason = "stop"): string {
    return this.message({ role: "assistant", content: [{ type: "text", text }], stopReason });
  }
  edit(targetId: string, replacement: null | { content: unknown }): string {
    return this.add({ type: "context_edit", targetId, replacement });
  }
  write(file: string): void {
    fs.writeFileSync(file, `${this.lines.join("\n")}\n`);
    settle(file);
  }

  /** The message timestamp of the entry with this id. */
  timestampOf(id: string): number {
    const line = this.lines.find((l) => l.includes(`"id":"${id}"`))!;
    return (JSON.parse(line) as { message: { timestamp: number } }).message.timestamp;
  }
}
