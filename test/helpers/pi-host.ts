/**
 * A minimal pi host for handler tests: pi's REAL SessionManager holds the session, and this host
 * plays pi's event loop around it the way agent-session.js does (handlers first, then
 * persistence: message_end → appendMessage → turn_end → agent_end). `pi.appendEntry` is pi's own
 * `sessionManager.appendCustomEntry`. Only the event plumbing is stand-in; the end-to-end test
 * runs the real CLI.
 */

import { withFlushEachReply } from "../../bench/lib/pi-agent-dir.js";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { SessionManager, type ExtensionAPI, type ExtensionCommandContext } from "@mariozechner/pi-coding-agent";
import { createChainpress } from "../../src/extension/index.js";
import type { Chainpress, ChainpressOptions } from "../../src/extension/runtime.js";

type Handler = (event: unknown, ctx: unknown) => unknown;
type Command = { handler: (args: string, ctx: ExtensionCommandContext) => Promise<void> };
type Tool = { name: string; execute: (id: string, params: unknown, ...rest: unknown[]) => Promise<{ content: Array<{ type: string; text: string }>; details: unknown }> };

export interface Notice {
  message: string;
  level: string;
}

export class PiHost {
  readonly handlers = new Map<string, Handler[]>();
  readonly commands = new Map<string, Command>();
  readonly tools = new Map<string, Tool>();
  readonly notices: Notice[] = [];
  readonly statuses = new Map<string, string | undefined>();
  /** Make the next N `pi.appendEntry` calls throw (a full disk, say). */
  failAppends = 0;
  runtime!: Chainpress;

  constructor(
    public sessionManager: SessionManager,
    readonly agentDir: string,
  ) {}

  /** Load chainpress into this host and fire session_start, as pi does on startup. */
  static async start(sessionManager: SessionManager, agentDir: string, options: Omit<ChainpressOptions, "agentDir"> = {}): Promise<PiHost> {
    const host = new PiHost(sessionManager, agentDir);
    host.runtime = createChainpress(host.api(), { ...options, agentDir });
    await host.emit("session_start", { type: "session_start", reason: "startup" });
    return host;
  }

  api(): ExtensionAPI {
    const api = {
      on: (name: string, handler: Handler) => this.handlers.set(name, [...(this.handlers.get(name) ?? []), handler]),
      registerCommand: (name: string, options: Command) => this.commands.set(name, options),
      registerTool: (tool: Tool) => this.tools.set(tool.name, tool),
      appendEntry: (customType: string, data: unknown) => {
        if (this.failAppends > 0) {
          this.failAppends--;
          throw new Error("injected append failure");
        }
        this.sessionManager.appendCustomEntry(customType, data);
      },
    };
    return api as unknown as ExtensionAPI;
  }

  ctx(): ExtensionCommandContext {
    const ctx = {
      sessionManager: this.sessionManager,
      cwd: this.sessionManager.getCwd(),
      hasUI: true,
      ui: {
        notify: (message: string, level = "info") => this.notices.push({ message, level }),
        setStatus: (key: string, text: string | undefined) => this.statuses.set(key, text),
      },
      isIdle: () => true,
      waitForIdle: async () => undefined,
    };
    return ctx as unknown as ExtensionCommandContext;
  }

  /** Call every handler of an event in order, like pi's runner; returns their results. */
  async emit(name: string, event: unknown): Promise<unknown[]> {
    const results: unknown[] = [];
    for (const handler of this.handlers.get(name) ?? []) results.push(await handler(event, this.ctx()));
    return results;
  }

  /** One agent message through pi's pipeline: message_end handlers, then persistence. */
  async message(message: object): Promise<void> {
    await this.emit("message_end", { type: "message_end", message });
    this.sessionManager.appendMessage(message as Parameters<SessionManager["appendMessage"]>[0]);
  }

  /** The end of an agent run after a text-only reply: turn_end, then agent_end. */
  async endRun(): Promise<void> {
    await this.emit("turn_end", { type: "turn_end", turnIndex: 0, message: undefined, toolResults: [] });
    await this.emit("agent_end", { type: "agent_end", messages: [] });
  }

  /** What chainpress returns on `context` for the current branch's messages. */
  async context(messages = this.sessionManager.buildSessionContext().messages): Promise<{ input: unknown[]; output: unknown[] }> {
    const [result] = (await this.emit("context", { type: "context", messages })) as Array<{ messages: unknown[] }>;
    return { input: messages, output: result!.messages };
  }

  async command(line: string): Promise<void> {
    const [name, ...rest] = line.replace(/^\//, "").split(" ");
    await this.commands.get(name!)!.handler(rest.join(" "), this.ctx());
  }

  /** Wait until queued flushes and commands have finished. */
  idle(): Promise<void> {
    return this.runtime.queue.idle();
  }

  customEntries(customType: string): Array<{ id: string; data: any }> {
    return this.sessionManager.getEntries().filter((e) => e.type === "custom" && e.customType === customType) as Array<{ id: string; data: any }>;
  }
}

/** A temp agent dir with `chainpress` settings (workers 0 = compressor inline, no threads), the flush at each reply unless they say otherwise. */
export function tempAgentDir(chainpress: Record<string, unknown> = { workers: 0 }): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "chainpress-agent-"));
  fs.writeFileSync(path.join(dir, "settings.json"), JSON.stringify({ defaultProvider: "mock", chainpress: withFlushEachReply(chainpress) }, null, 2));
  return dir;
}
