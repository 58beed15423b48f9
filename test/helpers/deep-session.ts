/**
 * Sessions whose entries hold JSON nested thousands of levels deep, as a hostile or unlucky file
 * may: a JSONL line can hold 100,000 levels. JSON.stringify cannot write such a value (it
 * recurses), so each line is written with a placeholder string that is then replaced by the deep
 * JSON text itself.
 */

import { SessionLines } from "./session-lines.js";

/** Where a deep value sits in the session. */
export type DeepPlace = "arguments" | "details" | "user" | "assistant" | "custom" | "custom-message" | "edit" | "edited-chain-arguments";

/**
 * "edit": a `context_edit` replacement holds the deep value; "edited-chain-arguments": a call's
 * arguments do, in a chain another result of which an edit rewrites (such a chain goes to its
 * worker as messages, not as file lines).
 */
export const DEEP_PLACES: readonly DeepPlace[] = ["arguments", "details", "user", "assistant", "custom", "custom-message", "edit", "edited-chain-arguments"];

const HOLE = "@@DEEP-VALUE@@";

/**
 * JSON text `depth` containers deep: objects and arrays alternate, `{"k":[{"k":[…]}]}`, with a
 * leaf string at the bottom.
 */
export function deepJson(depth: number, leaf = "bottom"): string {
  const open: string[] = [];
  const close: string[] = [];
  for (let level = 0; level < depth; level++) {
    if (level % 2 === 0) {
      open.push('{"k":');
      close.push("}");
    } else {
      open.push("[");
      close.push("]");
    }
  }
  return `${open.join("")}${JSON.stringify(leaf)}${close.reverse().join("")}`;
}

/** Texts each session's messages carry, to find them in what is rendered. */
export const DEEP_TEXTS = {
  output: (k: number) => `deep output ${k} `.padEnd(2000, "o"),
  edited: "EDITED-BY-CONTEXT-EDIT",
};

/**
 * A session with one closed chain of three calls (outputs long enough to archive), then the deep
 * value at `place`, then a second closed chain, and a final reply. Returns its text.
 */
export function deepSession(place: DeepPlace, depth: number): string {
  const s = new SessionLines();
  const deep = deepJson(depth);
  const chain = (label: string, withDeep: boolean) => {
    s.message({ role: "user", content: [{ type: "text", text: `task ${label}` }, ...(withDeep && place === "user" ? [{ type: "text", text: "deep part", meta: HOLE }] : [])] });
    const resultIds: string[] = [];
    for (let k = 0; k < 3; k++) {
      const id = `${label}_call_${k}`;
      const args: Record<string, unknown> = { command: `run ${label} ${k}` };
      if (withDeep && k === 1 && (place === "arguments" || place === "edited-chain-arguments")) args.deep = HOLE;
      s.message({ role: "assistant", content: [{ type: "toolCall", id, name: "bash", arguments: args }], stopReason: "toolUse" });
      const result: Record<string, unknown> = { role: "toolResult", toolCallId: id, toolName: "bash", content: [{ type: "text", text: DEEP_TEXTS.output(k) }], isError: false };
      if (withDeep && k === 1 && place === "details") result.details = HOLE;
      resultIds.push(s.message(result));
    }
    if (withDeep && place === "assistant") s.message({ role: "assistant", content: [{ type: "text", text: `${label} done`, meta: HOLE }], stopReason: "stop" });
    else s.reply(`${label} done`);
    return resultIds;
  };
  const first = chain("one", true);
  if (place === "custom") s.add({ type: "custom", customType: "some-extension", data: HOLE });
  if (place === "custom-message") s.add({ type: "custom_message", customType: "some-extension", content: "a note from an extension", display: true, details: HOLE });
  if (place === "edit") s.edit(first[1]!, { content: [{ type: "text", text: DEEP_TEXTS.edited, meta: HOLE }] });
  if (place === "edited-chain-arguments") s.edit(first[0]!, { content: DEEP_TEXTS.edited });
  chain("two", false);
  return `${s.lines.map((line) => line.replace(`"${HOLE}"`, deep)).join("\n")}\n`;
}
