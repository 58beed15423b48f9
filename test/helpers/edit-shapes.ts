/**
 * `context_edit` replacements of every shape a file may hold, for tests that check chainpress
 * against pi 1.6's own projection: the malformed shapes of issue 45 and more, fast-check
 * arbitraries for fuzzing, and the render's orphan sweep applied to pi's reduced context.
 */

import fc from "fast-check";
import type { PiContextMessage } from "./pi-loader.js";

/** Replacements pi 1.6 applies although they are not `null | {content: string | array}`: each hides its target's content. */
export const MALFORMED_REPLACEMENTS: ReadonlyArray<readonly [string, unknown]> = [
  ["{content: 42}", { content: 42 }],
  ['"BARE"', "BARE"],
  ["{}", {}],
  ["{content: null}", { content: null }],
  ["a number", 7],
  ["zero", 0],
  ["an empty string", ""],
  ["true", true],
  ["false", false],
  ["an array of parts", [{ type: "text", text: "array replacement" }]],
  ["an empty array", []],
  ["{content: {type, text}}", { content: { type: "text", text: "object content" } }],
  ["{content: true}", { content: true }],
  ["{text} without content", { text: "no content key" }],
  ["{__proto__: {content}}", JSON.parse('{"__proto__":{"content":"from a __proto__ key"}}') as unknown],
];

/** Replacements pi 1.6 applies as written although they are odd: extra keys, content parts of any shape. */
export const ODD_WELL_FORMED: ReadonlyArray<readonly [string, unknown]> = [
  ["{content, extra key}", { content: "kept text", extra: 1 }],
  ["{content: bad parts}", { content: [42, null, { type: "text" }, { type: "text", text: 5 }, { type: "image" }, { type: "text", text: "good part" }] }],
  ["{content: []}", { content: [] }],
];

const text = fc.string({ maxLength: 12 });
const part = fc.oneof(fc.record({ type: fc.constant("text"), text }), fc.record({ type: fc.constantFrom("image", "thinking", "toolCall"), id: text }), fc.jsonValue({ maxDepth: 2 }));

/** Any replacement a file may hold: pi's own shapes, their near misses, and any JSON value. */
export const replacementArb: fc.Arbitrary<unknown> = fc.oneof(
  fc.constant(null),
  fc.record({ content: text }),
  fc.record({ content: fc.array(part, { maxLength: 4 }) }),
  fc.record({ content: fc.jsonValue({ maxDepth: 2 }) }),
  fc.jsonValue({ maxDepth: 2 }),
  fc.dictionary(fc.constantFrom("content", "text", "replacement", "__proto__", "x"), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }),
  fc.constantFrom(...MALFORMED_REPLACEMENTS.map(([, value]) => value)),
);

/**
 * pi's reduced context as `chainpress render` shows it: the render's last phase
 * (core/render/orphan-sweep.ts) drops a tool result no immediately preceding assistant turn
 * opened, which providers reject; pi's projection keeps it. An assistant opens its call ids, a
 * result closes its own, any other message closes all.
 */
export function withOrphansSwept(messages: readonly PiContextMessage[]): PiContextMessage[] {
  let open = new Set<unknown>();
  const kept: PiContextMessage[] = [];
  for (const message of messages) {
    if (message.role === "toolResult") {
      if (open.delete(message.toolCallId)) kept.push(message);
      continue;
    }
    open = message.role === "assistant" ? new Set(message.toolCallIds) : new Set();
    kept.push(message);
  }
  return kept;
}
