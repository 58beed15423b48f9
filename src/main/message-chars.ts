/**
 * A message's billed size in characters (core/chain-shrink.ts `billedChars`), kept per message
 * object: pi keeps its message objects, and a render returns untouched ones as they are, so each
 * is measured once however often a context is weighed.
 */

import { billedChars } from "../core/chain-shrink.js";
import type { AgentMessage } from "../core/session-types.js";

export type MessageChars = WeakMap<object, number>;

export function billedCharsOf(message: AgentMessage, known: MessageChars): number {
  let chars = known.get(message);
  if (chars === undefined) known.set(message, (chars = billedChars(message)));
  return chars;
}
