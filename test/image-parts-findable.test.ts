/**
 * What the model is told about archived images (issue 46 item 2): the archive map marks an
 * output holding images, the open-chain stub says what they were, and search can filter on them
 * or list them. On real session files whose records carry `parts` (test/helpers/image-session.ts),
 * through `chainpress render`, real worker threads, and context_tree_query in pi.
 */

import { SessionManager } from "@mariozechner/pi-coding-agent";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IMAGES_MAP_HEADER, MAP_HEADER } from "../src/core/archive-map.js";
import { occurrenceKey } from "../src/core/occurrence-key.js";
import { parseQueryRequest } from "../src/core/query-request.js";
import { pruneMessages } from "../src/core/render/prune-messages.js";
import { searchText } from "../src/core/search-report.js";
import { contextMessages } from "../src/core/session-tree.js";
import { createChainRunner } from "../src/main/chain-runner.js";
import { searchArchive, searchRequestOf, type SearchScope } from "../src/main/search-archive.js";
import { loadSessionModel } from "../src/main/session-model.js";
import { ensureBuilt, removeTempDirs, runCli, settle, tempDir } from "./helpers/cli-harness.js";
import { gifBytes, pngBytes } from "./helpers/image-bytes.js";
import { ImageSession, imagePart, textPart, type PartsCall } from "./helpers/image-session.js";
import { PiHost, tempAgentDir } from "./helpers/pi-host.js";

beforeAll(() => ensureBuilt());
afterAll(() => removeTempDirs());

const SMALL_PNG = pngBytes(640, 480); // inline: its JSON is under the test's spill threshold
const BIG_PNG = pngBytes(1280, 800, 20_000); // spilled: a part file of its own
const read = (id: string, file: string, content: unknown[]): PartsCall => ({ id, name: "read", args: { path: `/home/u/proj/${file}` }, content });
const bash = (id: string, command: string, output: string): PartsCall => ({ id, name: "bash", args: { command }, content: [textPart(output)] });

/** b1 text only (t1-t2); b2 with images (t3-t6); an open chain with one image output (t7-t8). */
function imageSession(withImageChain = true): ImageSession {
  const session = new ImageSession();
  session.chain("build", [bash("c1", "npm run build", "built ok"), read("c2", "src/a.ts", [textPart("export const a = 1;")])]);
  if (withImageChain) {
    session.chain("look at the UI", [
      read("c3", "shots/home.png", [textPart("Read image file [image/png]"), imagePart(SMALL_PNG)]),
      read("c4", "shots/big.png", [textPart("Read image file [image/png]"), imagePart(BIG_PNG)]),
      bash("c5", "ls shots", "home.png\nbig.png"),
      read("c6", "shots/anim.gif", [imagePart(gifBytes(32, 16), "image/gif")]),
    ]);
  }
  session.openChain("more", [read("c7", "shots/open.png", [textPart("Read image file [image/png]"), imagePart(SMALL_PNG)]), bash("c8", "echo hi", "hi")]);
  return session;
}

async function writeSession(session: ImageSession): Promise<string> {
  const file = await session.write(tempDir("chainpress-images-"));
  settle(file);
  return file;
}

function renderText(file: string): string {
  const run = runCli(["render", file, "--text"]);
  expect(run.status, run.stderr).toBe(0);
  return run.out;
}

/** The text of one compressed chain's synthetic message. */
function chainText(rendered: string, blockId: string): string {
  const start = rendered.indexOf(`<compressed-chain id="${blockId}"`);
  expect(start, `${blockId} is rendered`).toBeGreaterThanOrEqual(0);
  return rendered.slice(start, rendered.indexOf("</compressed-chain>", start));
}

// 1,282 and 22,694 bytes (test/helpers/image-bytes.ts makes the same bytes for the same arguments).
const KB_SMALL = "1.3 KB";
const KB_BIG = "22 KB";

describe("the archive map and the open-chain stub", () => {
  let file: string;
  let rendered: string;
  beforeAll(async () => {
    file = await writeSession(imageSession());
    rendered = renderText(file);
  });

  it("marks each output holding images, with the legend only in that chain's header", () => {
    const b2 = chainText(rendered, "b2");
    expect(b2).toContain(`${IMAGES_MAP_HEADER}\n(paths under /home/u/proj/shots/)\nt3* read home.png\nt4* read big.png\nt5 bash ls shots\nt6* read anim.gif`);
    const b1 = chainText(rendered, "b1");
    expect(b1).toContain(`${MAP_HEADER}\nt1 bash npm run build\nt2 read /home/u/proj/src/a.ts`);
    expect(b1).not.toContain("holds images");
  });

  it("a chain with images never changes an older chain's map", async () => {
    const without = renderText(await writeSession(imageSession(false)));
    expect(chainText(rendered, "b1")).toBe(chainText(without, "b1"));
  });

  it("the open-chain stub of an image output says which image it held; a text-only stub is as before", () => {
    expect(rendered).toContain(
      `[Archived output of read /home/u/proj/shots/open.png (~7 tokens), ref \`t7\`: not shown to keep the context small. It held 1 image: image/png 640\u00d7480 ${KB_SMALL}. context_tree_query with ref \`t7\` returns it verbatim.]`,
    );
    expect(rendered).toContain("[Archived output of bash echo hi (~1 tokens), ref `t8`: not shown to keep the context small. context_tree_query with ref `t8` returns it verbatim.]");
  });

  it("renders the same bytes from call to call", () => {
    expect(runCli(["render", file]).stdout.equals(runCli(["render", file]).stdout)).toBe(true);
    expect(renderText(file)).toBe(rendered);
  });

  it("an output a context edit changed is not marked: the edit hides its images too", async () => {
    const model = await loadSessionModel(file);
    const messages = contextMessages(model.branch, model.edits);
    const edited = new Map([[occurrenceKey("c3", model.state.recordForKey(model.state.keyByRef.get("t3")!)!.resultTimestamp), { text: "screenshot removed" }]]);
    const text = (options: Parameters<typeof pruneMessages>[2]) => JSON.stringify(pruneMessages(messages, model.state, options).messages);
    expect(text({})).toContain("t3* read home.png");
    expect(text({ editedOutputs: edited })).toContain("t3 read home.png\\nt4* read big.png");
  });
});

describe("the open-chain stub of a spilled image and of several parts", () => {
  it("names the spilled image's type and size, and counts images past the third and other parts", async () => {
    const session = new ImageSession();
    session.openChain("shots", [
      read("s1", "big.png", [imagePart(BIG_PNG)]),
      read("s2", "many.png", [imagePart(SMALL_PNG), imagePart(SMALL_PNG, "image/webp"), imagePart(SMALL_PNG), imagePart(SMALL_PNG), { type: "audio", data: "AAAA" }]),
    ]);
    const rendered = renderText(await writeSession(session));
    expect(rendered).toContain(`It held 1 image: image/png ${KB_BIG}. context_tree_query with ref \`t1\``);
    expect(rendered).toContain(`It held 4 images: image/png 640\u00d7480 ${KB_SMALL}; image/webp 640\u00d7480 ${KB_SMALL}; image/png 640\u00d7480 ${KB_SMALL}; 1 more and 1 other part.`);
  });
});

describe("searching by images", () => {
  let file: string;
  let scope: SearchScope;
  beforeAll(async () => {
    file = await writeSession(imageSession());
    const model = await loadSessionModel(file);
    scope = { state: model.state, editedOutputs: model.editedOutputs, blobDir: model.blobDir, runner: createChainRunner(1) };
  });
  afterAll(async () => {
    await scope.runner.close();
  });

  const ask = (params: Record<string, unknown>) => {
    const request = parseQueryRequest(params);
    if (typeof request === "string" || request.kind !== "search") throw new Error(`not a search: ${JSON.stringify(request)}`);
    return request;
  };

  it("hasImages true keeps the outputs holding images, false the others; hits say what they hold", async () => {
    const withImages = await searchArchive(scope, searchRequestOf(ask({ search: "png", hasImages: true })));
    expect(withImages.hits.map((h) => h.ref).sort()).toEqual(["t3", "t4", "t7"]);
    expect(withImages.searched).toBe(4);
    const t3 = withImages.hits.find((h) => h.ref === "t3")!;
    expect(t3.parts).toEqual({ images: [{ mimeType: "image/png", bytes: Math.floor((SMALL_PNG.toString("base64").length * 3) / 4), width: 640, height: 480 }], others: 0 });
    const text = searchText(ask({ search: "png", hasImages: true }).pattern, withImages, true);
    expect(text).toMatch(/^Search "png" \(literal, case-insensitive\) in outputs holding images: 3 hits in 4 archived outputs; best first:\n/);
    expect(text).toContain(`t3 read /home/u/proj/shots/home.png (b2, 27 chars, 1 match, args match); holds 1 image: image/png 640\u00d7480 ${KB_SMALL}\n`);
    const without = await searchArchive(scope, searchRequestOf(ask({ search: "png", hasImages: false })));
    expect(without.hits.map((h) => h.ref)).toEqual(["t5"]);
    expect(without.searched).toBe(4);
    expect(without.hits[0]!.parts).toBeUndefined();
  });

  it("a search without hasImages finds both, and says so only on the image outputs", async () => {
    const all = await searchArchive(scope, searchRequestOf(ask({ search: "png" })));
    const text = searchText(ask({ search: "png" }).pattern, all);
    expect(text).toMatch(/^Search "png" \(literal, case-insensitive\): /);
    expect(text).toContain("t5 bash ls shots (b2, 16 chars, 2 matches)\n");
    expect(text).toContain(`t4 read /home/u/proj/shots/big.png (b2, 27 chars, 1 match, args match); holds 1 image: image/png ${KB_BIG}\n`);
  });

  it("hasImages true alone lists the image outputs newest first, bounded by limit", async () => {
    const request = ask({ hasImages: true, limit: 3 });
    expect(request.pattern).toBeUndefined();
    const listed = await searchArchive(scope, searchRequestOf(request));
    expect(listed.hits.map((h) => h.ref)).toEqual(["t7", "t6", "t4"]);
    expect(listed.total).toBe(4);
    const text = searchText(request.pattern, listed, true);
    expect(text.split("\n")).toEqual([
      "Archived outputs holding images: 4; newest first:",
      `1. t7 read /home/u/proj/shots/open.png (open chain, 27 chars); holds 1 image: image/png 640\u00d7480 ${KB_SMALL}`,
      "2. t6 read /home/u/proj/shots/anim.gif (b2, 0 chars); holds 1 image: image/gif 32\u00d716 24 bytes",
      `3. t4 read /home/u/proj/shots/big.png (b2, 27 chars); holds 1 image: image/png ${KB_BIG}`,
      "1 more output not shown: raise limit (up to 50), or narrow with toolNames or blockId.",
      'Read one: context_tree_query {"toolCallIds":["t7"]}; later pages with "offset".',
    ]);
    const again = await searchArchive(scope, searchRequestOf(request));
    expect(searchText(request.pattern, again, true)).toBe(text);
    const inB2 = await searchArchive(scope, searchRequestOf(ask({ hasImages: true, blockId: "b2" })));
    expect(inB2.hits.map((h) => h.ref)).toEqual(["t6", "t4", "t3"]);
  });

  it("an output a context edit changed holds no images for the filter, nor for its hit", async () => {
    const key = occurrenceKey("c3", scope.state.recordForKey(scope.state.keyByRef.get("t3")!)!.resultTimestamp);
    const edited = { ...scope, editedOutputs: new Map([[key, { text: "Read image file [image/png] (image removed)" }]]) };
    const listed = await searchArchive(edited, searchRequestOf(ask({ hasImages: true })));
    expect(listed.hits.map((h) => h.ref)).toEqual(["t7", "t6", "t4"]);
    const found = await searchArchive(edited, searchRequestOf(ask({ search: "image removed", hasImages: false })));
    expect(found.hits.map((h) => h.ref)).toEqual(["t3"]);
    expect(found.hits[0]!.parts).toBeUndefined();
  });

  it("bad hasImages requests get a message saying what to pass", () => {
    expect(parseQueryRequest({ search: "x", hasImages: "yes" })).toBe("hasImages must be true or false");
    expect(parseQueryRequest({ hasImages: 1 })).toBe("hasImages must be true or false");
    expect(parseQueryRequest({ hasImages: false })).toMatch(/^hasImages false narrows a search: pass search text with it/);
    expect(parseQueryRequest({ hasImages: true, toolCallIds: ["t3"] })).toMatch(/^hasImages narrows a search or lists outputs: it does not go with toolCallIds/);
    expect(parseQueryRequest({ hasImages: true, parts: [1] })).toMatch(/^parts reads non-text parts of one output by ref: it goes with toolCallIds, not with hasImages/);
    expect(parseQueryRequest({ hasImages: true, regex: true })).toMatch(/^regex and caseSensitive go with search text/);
    expect(parseQueryRequest({ hasImages: true, limit: 0 })).toBe("limit must be a whole number from 1 to 50");
    expect(parseQueryRequest({ search: "x" })).toEqual({ kind: "search", pattern: { kind: "literal", text: "x", caseSensitive: false }, limit: 10 });
  });

  it("context_tree_query filters and lists in pi", async () => {
    const host = await PiHost.start(SessionManager.open(file), tempAgentDir());
    try {
      const tool = host.tools.get("context_tree_query")!;
      const listed = await tool.execute("q1", { hasImages: true });
      expect(listed.content[0]!.text).toMatch(/^Archived outputs holding images: 4; newest first:\n1\. t7 read /);
      const found = await tool.execute("q2", { search: "anim", hasImages: true });
      expect(found.content[0]!.text).toContain("\n1. t6 read /home/u/proj/shots/anim.gif (b2, 0 chars, args match); holds 1 image: image/gif 32\u00d716 24 bytes\n");
      expect((found.details as { search: { hits: Array<{ parts?: unknown }> } }).search.hits[0]!.parts).toBeDefined();
      await expect(tool.execute("q3", { hasImages: false })).rejects.toThrow(/hasImages false narrows a search/);
    } finally {
      await host.runtime.runner.close();
    }
  });
});

describe("chainpress query --has-images", () => {
  it("lists the image outputs newest first, filters a search either way, and prints what the tool prints", async () => {
    const file = await writeSession(imageSession());
    const listed = runCli(["query", file, "--has-images", "--limit", "3"]);
    expect(listed.status, listed.stderr).toBe(0);
    expect(listed.out.split("\n")[0]).toBe("Archived outputs holding images: 4; newest first:");
    expect(listed.out).toMatch(/\n1\. t7 read [^\n]*\n2\. t6 read [^\n]*\n3\. t4 read /);
    const json = runCli(["query", file, "--has-images", "--json"]);
    expect(json.status, json.stderr).toBe(0);
    expect(JSON.parse(json.out).hits.map((h: { ref: string }) => h.ref)).toEqual(["t7", "t6", "t4", "t3"]);
    const without = runCli(["query", file, "--search", "png", "--no-has-images", "--json"]);
    expect(without.status, without.stderr).toBe(0);
    expect(JSON.parse(without.out).hits.map((h: { ref: string }) => h.ref)).toEqual(["t5"]);
    const alone = runCli(["query", file, "--no-has-images"]);
    expect(alone.status).toBe(2);
    expect(alone.stderr).toMatch(/hasImages false narrows a search/);
  });
});

describe("text-only archives", () => {
  it("a search's text and JSON carry nothing about parts", async () => {
    const file = await writeSession(imageSession(false));
    const run = runCli(["query", file, "--search", "npm", "--json"]);
    expect(run.status, run.stderr).toBe(0);
    expect(Object.keys(JSON.parse(run.out).hits[0])).toEqual(["ref", "toolCallId", "toolName", "target", "blockId", "chars", "matches", "inArgs", "lines", "score"]);
    expect(run.out).not.toContain("parts");
  });
});
