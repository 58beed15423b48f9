/**
 * Drives a real `pi --mode rpc` child over stdin/stdout JSONL. Every stdout event is kept in
 * order; waits search that history from a given index, so an event that arrived before the wait
 * started is never missed. stdout is split on "\n" only: Node's readline also splits on U+2028,
 * which JSON strings may contain.
 */

import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import path from "node:path";
import type { PiBuild } from "./pi-builds.js";

export const PI_CLI = path.resolve("node_modules/@mariozechner/pi-coding-agent/dist/cli.js");

/**
 * How to start `build` (bench/lib/pi-builds.ts: its Node and its CLI). Without one: pi 0.73.1 on
 * this Node, or `CHAINPRESS_E2E_PI="<node> <cli.js>"` by hand (e.g. with a preloaded timer).
 */
export function piCommand(build?: PiBuild): [string, string[]] {
  if (build) return [build.node, [build.cli]];
  const custom = process.env.CHAINPRESS_E2E_PI?.trim();
  if (!custom) return [process.execPath, [PI_CLI]];
  const [bin, ...args] = custom.split(/\s+/);
  return [bin!, args];
}

export type RpcEvent = Record<string, unknown> & { type: string };

export interface PiRpc {
  readonly events: RpcEvent[];
  /** stderr so far (pi's warnings, extension load errors). */
  stderr(): string;
  /** Send a command; resolves with its `response` event (default wait: 30 s). */
  send(command: Record<string, unknown>, timeoutMs?: number): Promise<RpcEvent>;
  /** First event at or after `from` that matches. */
  waitFor(match: (event: RpcEvent) => boolean, from: number, timeoutMs?: number): Promise<RpcEvent>;
  /** Prompt the agent and wait for the end of its run. */
  prompt(message: string): Promise<void>;
  /** Run a slash command and wait for the first notice it shows that matches `notice` (default wait: 30 s). */
  command(message: string, notice: RegExp, timeoutMs?: number): Promise<string>;
  /** Close stdin (pi exits) and wait; kills after the timeout. Resolves with the exit code. */
  close(timeoutMs?: number): Promise<number | null>;
}

export function startPiRpc(options: { cwd: string; env: NodeJS.ProcessEnv; args: string[]; build?: PiBuild }): PiRpc {
  const [bin, prefix] = piCommand(options.build);
  const child = spawn(bin, [...prefix, ...options.args, "--mode", "rpc"], { cwd: options.cwd, env: options.env, stdio: ["pipe", "pipe", "pipe"] });
  const events: RpcEvent[] = [];
  const listeners = new Set<() => void>();
  let stderr = "";
  let buffer = "";
  child.stderr.setEncoding("utf8").on("data", (text: string) => (stderr += text));
  child.stdout.setEncoding("utf8").on("data", (text: string) => {
    buffer += text;
    for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
      const line = buffer.slice(0, nl).replace(/\r$/, "");
      buffer = buffer.slice(nl + 1);
      if (line.trim()) events.push(parseLine(line));
    }
    for (const listener of [...listeners]) listener();
  });
  const waitFor = (match: (event: RpcEvent) => boolean, from: number, timeoutMs = 30_000) => waitForEvent(child, events, listeners, () => stderr, match, from, timeoutMs);
  let nextId = 0;
  const rpc: PiRpc = {
    events,
    stderr: () => stderr,
    waitFor,
    async send(command, timeoutMs) {
      const id = `req-${++nextId}`;
      const from = events.length;
      child.stdin.write(`${JSON.stringify({ id, ...command })}\n`);
      const response = await waitFor((e) => e.type === "response" && e.id === id, from, timeoutMs);
      if (response.success !== true) throw new Error(`pi rejected ${JSON.stringify(command)}: ${String(response.error)}`);
      return response;
    },
    async prompt(message) {
      const from = events.length;
      await rpc.send({ type: "prompt", message });
      await waitFor((e) => e.type === "agent_end", from);
    },
    async command(message, notice, timeoutMs) {
      const from = events.length;
      await rpc.send({ type: "prompt", message }, timeoutMs);
      const event = await waitFor((e) => e.type === "extension_ui_request" && e.method === "notify" && notice.test(String(e.message)), from, timeoutMs);
      return String(event.message);
    },
    close: (timeoutMs = 15_000) => closeChild(child, timeoutMs),
  };
  return rpc;
}

function parseLine(line: string): RpcEvent {
  try {
    return JSON.parse(line) as RpcEvent;
  } catch {
    return { type: "non-json", line };
  }
}

function waitForEvent(
  child: ChildProcessWithoutNullStreams,
  events: RpcEvent[],
  listeners: Set<() => void>,
  stderr: () => string,
  match: (event: RpcEvent) => boolean,
  from: number,
  timeoutMs: number,
): Promise<RpcEvent> {
  return new Promise((resolve, reject) => {
    let scanned = from;
    const check = () => {
      for (; scanned < events.length; scanned++) {
        if (match(events[scanned]!)) return finish(() => resolve(events[scanned]!));
      }
      if (child.exitCode !== null) finish(() => reject(new Error(`pi exited (${child.exitCode}) while waiting; stderr:\n${stderr()}`)));
    };
    const timer = setTimeout(() => finish(() => reject(new Error(`timed out waiting for a pi event; last events: ${JSON.stringify(events.slice(-5)).slice(0, 2000)}\nstderr:\n${stderr()}`))), timeoutMs);
    const onExit = () => check();
    const finish = (settle: () => void) => {
      clearTimeout(timer);
      listeners.delete(check);
      child.off("exit", onExit);
      settle();
    };
    listeners.add(check);
    child.on("exit", onExit);
    check();
  });
}

async function closeChild(child: ChildProcessWithoutNullStreams, timeoutMs: number): Promise<number | null> {
  if (child.exitCode !== null) return child.exitCode;
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  child.stdin.end();
  const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
  const code = await exited;
  clearTimeout(timer);
  return code;
}
