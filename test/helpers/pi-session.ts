/**
 * pi-shaped agent messages for handler tests (the shapes pi 0.73.1 persists: see
 * shared/reference/pi-harness/examples), with one increasing clock so timestamps are unique.
 */

export class MessageClock {
  private now: number;
  constructor(start = 1_800_000_000_000) {
    this.now = start;
  }
  next(): number {
    return (this.now += 10);
  }
}

const USAGE = { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };

export function piUser(clock: MessageClock, text: string) {
  return { role: "user" as const, content: [{ type: "text" as const, text }], timestamp: clock.next() };
}

function piAssistant(clock: MessageClock, content: unknown[], stopReason: "stop" | "toolUse") {
  return { role: "assistant" as const, content, api: "openai-completions", provider: "mock", model: "mock-model", usage: USAGE, stopReason, timestamp: clock.next() };
}

export function piToolCall(clock: MessageClock, id: string, name: string, args: Record<string, unknown>) {
  return piAssistant(clock, [{ type: "toolCall", id, name, arguments: args }], "toolUse");
}

export function piReply(clock: MessageClock, text: string) {
  return piAssistant(clock, [{ type: "text", text }], "stop");
}

export function piResult(clock: MessageClock, id: string, name: string, text: string) {
  return { role: "toolResult" as const, toolCallId: id, toolName: name, content: [{ type: "text" as const, text }], isError: false, timestamp: clock.next() };
}

/** The messages of one closed chain: a prompt, one tool call per output, a text reply. */
export function chainMessages(clock: MessageClock, label: string, outputs: string[], tool = "bash"): object[] {
  const messages: object[] = [piUser(clock, `prompt ${label}`)];
  outputs.forEach((output, i) => {
    const id = `${label}_call_${i}`;
    messages.push(piToolCall(clock, id, tool, { command: `produce ${label} ${i}` }), piResult(clock, id, tool, output));
  });
  messages.push(piReply(clock, `${label} done`));
  return messages;
}
