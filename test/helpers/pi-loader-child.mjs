// Runs one pi build's OWN session loader on session files, in a process of that build's Node
// (test/helpers/pi-loader.ts starts it): `node pi-loader-child.mjs <pi package entry> <scratch
// folder> <session file>...`. For each file it prints what
// `SessionManager.open(file).buildSessionContext()` yields, reduced to
// `{role, toolCallId?, toolCallIds?, text}` per message, as one JSON array of arrays on stdout.
//
// pi migrates an old file in place when it opens it (and writes nowhere else given a session
// folder), so each file is opened from a copy in the scratch folder.
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

/** The text parts of a message's content, joined with nothing between them (thinking, tool calls and images left out). */
function contentText(content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  let text = "";
  for (const part of content) if (part?.type === "text" && typeof part.text === "string") text += part.text;
  return text;
}

function reduce(message) {
  const out = { role: message.role };
  if (message.role === "toolResult") out.toolCallId = message.toolCallId;
  if (message.role === "assistant") {
    out.toolCallIds = Array.isArray(message.content) ? message.content.filter((part) => part?.type === "toolCall").map((part) => part.id) : [];
  }
  // compactionSummary and branchSummary messages carry their text as `summary`, not content.
  out.text = message.content !== undefined ? contentText(message.content) : typeof message.summary === "string" ? message.summary : "";
  return out;
}

const [entry, scratch, ...rest] = process.argv.slice(2);
// "--in-place": open the files themselves, so pi migrates them where they are (migrateWithPi).
const inPlace = rest[0] === "--in-place";
const files = inPlace ? rest.slice(1) : rest;
const { SessionManager } = await import(pathToFileURL(entry).href);
const results = [];
for (const [i, file] of files.entries()) {
  const dir = path.join(scratch, String(i));
  fs.mkdirSync(dir, { recursive: true });
  const copy = inPlace ? file : path.join(dir, path.basename(file));
  if (!inPlace) fs.copyFileSync(file, copy);
  const manager = SessionManager.open(copy, inPlace ? path.dirname(file) : dir);
  results.push(manager.buildSessionContext().messages.map(reduce));
}
process.stdout.write(JSON.stringify(results));
