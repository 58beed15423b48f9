/**
 * Issue 39 end to end on the REAL pi (rpc mode, offline), once per supported build (pi 0.73.1 on
 * Node 20 and pi 1.6.0 on Node 22, bench/lib/pi-builds.ts), with chainpress loaded from dist/:
 * the scripted model FINDS an archived output with context_tree_query `search`, takes the ref
 * from the hit list it was sent, and reads that output page by page with `offset`, following
 * the first page's note; the two pages are the output byte for byte.
 *
 * How big an archived output can be: pi's own tools cut what they return at 50 KB / 2000 lines
 * (constants in pi's tools/truncate.js; no setting changes them), and context_tree_query's page
 * is the same 50 KB / 2000 lines. So no built-in tool output spans more than two pages, and no
 * tool is added here to make a longer one. What does span two: `bash cat big.txt` on a ~220 KB
 * file returns its last whole lines that fit 51,200 bytes PLUS pi's own "[Showing lines
 * 3863-5000 of 5000 (50.0KB limit). Full output: ...]" notice, past one page. The file is cut so
 * that pi keeps exactly 51,200 bytes (see BIG): page 1 ends just before the marker line, page 2
 * is the marker line (the file's end) and pi's notice.
 *
 * Timeline (rolling window 1; spill threshold 32768, so the pages are cut from the output read
 * back from its spill file):
 *   chain 1: read big.txt (its head: a decoy of the same size, without the marker),
 *            bash cat big.txt (its tail: the marker line, as a whole line)
 *   chain 2: read notes.txt (the marker three times, inside sentences: a weaker hit)
 *   chain 3: bash echo         | c2 closes → b1 = c1; c3 closes → b2 = c2
 *   find:    search marker → page offset "1" → page at the note's offset → text
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { piEnv, writeAgentDir } from "../bench/lib/pi-agent-dir.js";
import { piBuild, PI_VERSIONS } from "../bench/lib/pi-builds.js";
import { startPiRpc, type PiRpc } from "../bench/lib/pi-rpc.js";
import { EXTENSION_ENTRY, ensureBuilt } from "./helpers/pi-build.js";
import { closeCleanly, sessionEntries } from "./helpers/pi-run-end.js";
import { contentText, lastUserTurn, startMockLlm } from "./helpers/pi-mock-llm.mjs";

type OpenAiMessage = { role: string; content: unknown; tool_call_id?: string; tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }> };
type Step = { text?: string; toolCalls?: Array<{ name: string; arguments: Record<string, unknown> }> };
type LoggedRequest = { n: number; request: { messages: OpenAiMessage[] }; step: Step; error?: string };

/** The file's last line, the only place it occurs (35 bytes: see BIG). */
const MARKER = "FIND-ME-Q7X3-UNIQUE-0035-BYTES-LONG";
const LINES = 5000;
/**
 * 4,999 lines of 44 bytes (43 characters: one is two bytes in UTF-8) and the marker as line
 * 5,000, with no final "\n" (after one, the builds would differ: pi 0.73.1 keeps an empty last
 * line, pi 1.6.0 drops the "\n").
 * pi's bash keeps whole lines from the end while they fit 51,200 bytes: the marker and 1,137
 * lines of 44 bytes + "\n" are 35 + 1,137 x 45 = 51,200 exactly. A page counts each line with
 * its "\n", so page 1 holds the 1,137 lines and the marker line starts page 2.
 */
const BIG = Array.from({ length: LINES - 1 }, (_, i) => `big ${String(i + 1).padStart(5, "0")} \u00e9 ${"x".repeat(31)}\n`).join("") + MARKER;
const NOTES = [1, 2, 3].map((i) => `note ${i}: the line ${MARKER} is somewhere near the end of big.txt`).join("\n") + "\n";

const read = (p: string): Step => ({ toolCalls: [{ name: "read", arguments: { path: p } }] });
const bash = (command: string): Step => ({ toolCalls: [{ name: "bash", arguments: { command } }] });
const query = (args: Record<string, unknown>): Step => ({ toolCalls: [{ name: "context_tree_query", arguments: args }] });

/** The text of the tool result that answers the model's last tool call. */
function lastToolResult(messages: OpenAiMessage[]): string {
  const last = messages[messages.length - 1]!;
  if (last.role !== "tool") throw new Error(`the last message is ${last.role}, not a tool result`);
  return contentText(last.content);
}

/** The first hit's ref, as the model reads it from the search's text. */
function firstHitRef(searchResult: string): string {
  const match = /^1\. (t\d+) /m.exec(searchResult);
  if (!match) throw new Error(`no hits in ${JSON.stringify(searchResult.slice(0, 300))}`);
  return match[1]!;
}

interface ReadPage {
  page: string;
  note: string;
  /** The arguments the note says to pass for the next page; null on the last page. */
  next: Record<string, unknown> | null;
}

/**
 * A page tool result split back into the page and its note, as the format says: the note is the
 * last line, and the page is everything before the line break that precedes it.
 */
function splitPage(text: string): ReadPage {
  const at = text.lastIndexOf("\n[Page of ");
  if (at === -1) throw new Error(`no page note at the end of ${JSON.stringify(text.slice(-300))}`);
  const note = text.slice(at + 1);
  const match = /^\[Page of t\d+: lines? \d+(?:-\d+)? of \d+[^\]]*?(?:; end of output|; next page: context_tree_query (\{.*\}))\]$/.exec(note);
  if (!match) throw new Error(`no page note at the end of ${JSON.stringify(text.slice(-300))}`);
  const next = match[1] === undefined ? null : (JSON.parse(match[1]) as Record<string, unknown>);
  return { page: text.slice(0, at), note, next };
}

const SCENARIOS: Record<string, (messages: OpenAiMessage[], step: number) => Step> = {
  "chain 1": (_, step) => [read("big.txt"), bash("cat big.txt"), { text: "c1 done" }][step]!,
  "chain 2": (_, step) => [read("notes.txt"), { text: "c2 done" }][step]!,
  "chain 3": (_, step) => [bash("echo filler-3"), { text: "c3 done" }][step]!,
  find: (messages, step) => {
    if (step === 0) return query({ search: MARKER });
    if (step === 1) return query({ toolCallIds: [firstHitRef(lastToolResult(messages))], offset: "1" });
    if (step === 2) {
      const { next } = splitPage(lastToolResult(messages));
      if (!next) throw new Error("the first page is the last one");
      return query(next);
    }
    return { text: "found it" };
  },
};

function script(request: { messages: OpenAiMessage[] }): Step {
  const turn = lastUserTurn(request.messages);
  const key = Object.keys(SCENARIOS).find((k) => turn.text.startsWith(k));
  if (!key) throw new Error(`no scenario for ${JSON.stringify(turn.text)}`);
  const step = SCENARIOS[key]!(request.messages, turn.step);
  if (!step) throw new Error(`scenario ${key} has no step ${turn.step}`);
  return step;
}

type Entry = { type: string; customType?: string; data?: any; message?: any };

describe.each(PI_VERSIONS)("find and page an archived output on a real pi %s", (version) => {
  let work: string;
  let mock: Awaited<ReturnType<typeof startMockLlm>>;
  let pi: PiRpc | undefined;
  let entries: Entry[];
  const requests = () => mock.requests as LoggedRequest[];
  /** The find prompt's request at `step`: 0 asks for the search, 1 carries its result, 2 page 1, 3 page 2. */
  const findRequest = (step: number) => requests().find((r) => lastUserTurn(r.request.messages).text.startsWith("find") && lastUserTurn(r.request.messages).step === step)!;
  const toolResults = () => entries.filter((e) => e.type === "message" && e.message.role === "toolResult").map((e) => e.message);
  const callOf = (name: string, args: Record<string, unknown>) =>
    entries.flatMap((e) => (e.type === "message" && e.message.role === "assistant" ? e.message.content : [])).find((c: any) => c.type === "toolCall" && c.name === name && JSON.stringify(c.arguments) === JSON.stringify(args));
  const resultOf = (call: { id: string }) => toolResults().find((m) => m.toolCallId === call.id)!;

  beforeAll(async () => {
    const build = piBuild(version);
    ensureBuilt();
    const started = performance.now();
    work = fs.mkdtempSync(path.join(os.tmpdir(), "chainpress-e2e-find-"));
    mock = await startMockLlm({ script, logFile: path.join(work, "requests.jsonl") });
    writeAgentDir(path.join(work, "agent"), mock.baseUrl, { spillThreshold: 32768, chainCompression: { rollingWindow: 1 } });
    const proj = path.join(work, "proj");
    fs.mkdirSync(proj);
    fs.writeFileSync(path.join(proj, "big.txt"), BIG);
    fs.writeFileSync(path.join(proj, "notes.txt"), NOTES);
    // pi's bash keeps a cut output's full text in a temp file: keep those in the scratch folder.
    const tmp = path.join(work, "tmp");
    fs.mkdirSync(tmp);
    pi = startPiRpc({ build, cwd: proj, env: { ...piEnv(path.join(work, "agent"), work), TMPDIR: tmp }, args: ["-e", EXTENSION_ENTRY] });
    const notices: string[] = [];
    for (const prompt of ["chain 1: read the big file", "chain 2: read the notes", "chain 3: one more command", "find: where is the marker line?"]) {
      await pi.prompt(prompt);
      // `/pruner status` queues behind the live flush: the chain that closed is compressed.
      notices.push(await pi.command("/pruner status", /^pruner: on/));
    }
    expect(notices[2]).toMatch(/chains: 3 closed, 0 interrupted, 2 compressed/);
    const sessionFile = ((await pi.send({ type: "get_state" })).data as { sessionFile: string }).sessionFile;
    await closeCleanly(pi, requests());
    pi = undefined;
    entries = sessionEntries(sessionFile);
    console.log(`find e2e on pi ${version}: ${requests().length} requests in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }, 90_000);

  afterAll(async () => {
    await pi?.close(5_000);
    await mock?.close();
    if (work && !process.env.KEEP_E2E) fs.rmSync(work, { recursive: true, force: true });
  });

  /** pi's bash output of `cat big.txt`, as the session holds it, and where pi's cut starts in the file. */
  function catOutput(): { text: string; firstLine: number } {
    const text = contentText(resultOf(callOf("bash", { command: "cat big.txt" })).content) as string;
    const match = /\n\n\[Showing lines (\d+)-5000 of 5000 \(50\.0KB limit\)\. Full output: [^\]]+\]$/.exec(text);
    if (!match) throw new Error(`bash's output of cat big.txt has no truncation notice: ${JSON.stringify(text.slice(-200))}`);
    return { text, firstLine: Number(match[1]) };
  }

  it("the search is run on the two compressed chains and its first hit is the output holding the marker line", () => {
    expect(findRequest(0).request.messages.map((m) => contentText(m.content)).filter((t) => t.startsWith("<compressed-chain")).map((t) => /id="(b\d+)"/.exec(t)![1])).toEqual(["b1", "b2"]);
    const searchText = lastToolResult(findRequest(1).request.messages);
    const { text, firstLine } = catOutput();
    const markerLine = LINES - firstLine + 1;
    expect(searchText).toMatch(new RegExp(`^Search "${MARKER}" \\(literal, case-insensitive\\): 2 hits in 3 archived outputs; best first:\n1\\. t\\d+ bash cat big\\.txt \\(b1, [\\d,]+ chars, 1 match\\)\n   ${markerLine}: ${MARKER}\n2\\. t\\d+ read notes\\.txt \\(b2, `));
    // The ref the model took names the call that produced the marker (the details map refs to ids).
    const cat = callOf("bash", { command: "cat big.txt" });
    const ref = firstHitRef(searchText);
    const search = resultOf(callOf("context_tree_query", { search: MARKER }));
    expect(search.details.search.hits[0]).toMatchObject({ ref, toolCallId: cat.id, toolName: "bash", blockId: "b1", chars: text.length });
    expect(text.split("\n")[markerLine - 1]).toBe(MARKER);
    expect(callOf("context_tree_query", { toolCallIds: [ref], offset: "1" })).toBeDefined();
  });

  it("the two pages, notes stripped, are the archived output byte for byte: the file's bytes, then pi's notice", () => {
    const first = splitPage(lastToolResult(findRequest(2).request.messages));
    const second = splitPage(lastToolResult(findRequest(3).request.messages));
    const ref = firstHitRef(lastToolResult(findRequest(1).request.messages));
    const { text: original, firstLine } = catOutput();
    const markerLine = LINES - firstLine + 1;
    // The model asked for page 2 with exactly what page 1's note named: the marker's line.
    expect(first.next).toEqual({ toolCallIds: [ref], offset: String(markerLine) });
    expect(callOf("context_tree_query", first.next!)).toBeDefined();
    expect(first.note).toBe(`[Page of ${ref}: lines 1-${markerLine - 1} of ${markerLine + 2}; next page: context_tree_query {"toolCallIds":["${ref}"],"offset":"${markerLine}"}]`);
    expect(second.note).toBe(`[Page of ${ref}: lines ${markerLine}-${markerLine + 2} of ${markerLine + 2}; end of output]`);
    expect(second.next).toBeNull();
    expect(first.page + second.page).toBe(original);
    // Against the file on disk: page 1 is big.txt from pi's first line up to the marker line,
    // byte for byte; page 2 is the marker line (the file's end) and pi's notice.
    const file = fs.readFileSync(path.join(work, "proj", "big.txt"), "utf8");
    expect(file).toBe(BIG);
    const cut = file.split("\n").slice(0, firstLine - 1).join("\n").length + 1;
    expect(first.page).toBe(file.slice(cut, file.length - MARKER.length));
    expect(Buffer.byteLength(first.page + MARKER)).toBe(51_200);
    expect(second.page).toBe(`${MARKER}${original.slice(original.lastIndexOf("\n\n[Showing lines "))}`);
    expect(original).toBe(file.slice(cut) + original.slice(original.lastIndexOf("\n\n[Showing lines ")));
    // And what the command really wrote: pi keeps bash's whole output in the file its notice names.
    const fullOutput = /Full output: ([^\]]+)\]$/.exec(original)![1]!;
    expect(fs.readFileSync(fullOutput, "utf8")).toBe(file);
  });

  it("the paged output came from its spill file: its archive record keeps no text", () => {
    const records = entries.filter((e) => e.type === "custom" && e.customType === "context-prune-index").flatMap((e) => e.data.toolCalls);
    const cat = callOf("bash", { command: "cat big.txt" });
    const record = records.find((r: { toolCallId: string }) => r.toolCallId === cat.id);
    expect(record.resultText).toBe("");
    expect(fs.readFileSync(record.spillPath, "utf8")).toBe(contentText(resultOf(cat).content));
  });
});
