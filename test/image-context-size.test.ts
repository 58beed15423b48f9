// Issue 46 item 3: every context measure counts an image as billed, never its base64 characters:
// on the real compact.jsonl (three PNG screenshots in `read` results) and on a session with PNG,
// JPEG, GIF and WebP images and one that is not an image, through `chainpress stats --json`, the
// compact report, and the lightened (file) model as well as the real one.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { detectOpenChain } from "../src/core/detect-chains.js";
import { createChainRunner } from "../src/main/chain-runner.js";
import { openChainDecision } from "../src/main/plan-open-chain.js";
import { nonTextParts } from "../src/core/archived-parts.js";
import { estimateTokens } from "../src/core/open-chain-policy.js";
import { archivedOutputStubText } from "../src/core/render/archived-output-stub.js";
import { measureContext, renderContext } from "../src/main/context-size.js";
import { scanSession } from "../src/main/scan-session.js";
import { loadSessionModel, modelOf } from "../src/main/session-model.js";
import { ensureBuilt, REAL_SESSIONS, removeTempDirs, runCli, settle, tempDir } from "./helpers/cli-harness.js";
import { gifBytes, jpegBytes, pngBytes, webpBytes } from "./helpers/image-bytes.js";
import { SessionBuilder } from "./helpers/session-builder.js";

beforeAll(ensureBuilt, 180_000);
afterAll(removeTempDirs);

/** Tokens by the provider's rule, written out here (not the module under test): w × h / 750, rounded up. */
const byPixels = (width: number, height: number) => Math.ceil((width * height) / 750);

/**
 * The context as billed, from the real render: JSON characters, each image's data string replaced
 * by its tokens × 4 (`tokens` gives them by data), and the images counted by rule.
 */
async function billedContext(file: string, tokens: Map<string, number | "pi-estimate">) {
  let chars = 0;
  const byRule = { pixels: 0, "pi-estimate": 0 };
  let imageTokens = 0;
  for (const message of renderContext(await loadSessionModel(file)) as Array<{ content?: unknown }>) {
    chars += JSON.stringify(message).length;
    for (const part of Array.isArray(message.content) ? message.content : []) {
      if (part.type !== "image") continue;
      const cost = tokens.get(part.data);
      expect(cost, "an image the test did not write").toBeDefined();
      const count = cost === "pi-estimate" ? 1200 : cost!;
      byRule[cost === "pi-estimate" ? "pi-estimate" : "pixels"]++;
      imageTokens += count;
      chars += count * 4 - JSON.stringify(part.data).length;
    }
  }
  return { chars, images: { count: byRule.pixels + byRule["pi-estimate"], tokens: imageTokens, byRule } };
}

async function lightenedModel(file: string) {
  const runner = createChainRunner(0);
  try {
    return modelOf(await scanSession(file, runner));
  } finally {
    await runner.close();
  }
}

async function lightenedMeasure(file: string) {
  return measureContext(await lightenedModel(file));
}

function statsJson(file: string) {
  const run = runCli(["stats", "--json", file]);
  expect(run.status, run.stderr).toBe(0);
  return JSON.parse(run.out);
}

/** All four routes agree with the billed count: lightened model, real model, `stats --json`, and the compact report's "before". */
async function expectBilled(file: string, expected: Awaited<ReturnType<typeof billedContext>>) {
  const light = await lightenedMeasure(file);
  const real = measureContext(await loadSessionModel(file));
  expect({ chars: light.chars, images: light.images }, "lightened model").toEqual(expected);
  expect({ chars: real.chars, images: real.images }, "real model").toEqual(expected);
  const stats = statsJson(file).context.after;
  expect({ chars: stats.chars, images: stats.images }, "stats --json").toEqual(expected);
  expect(stats.tokens).toBe(Math.round(expected.chars / 4));
}

describe("an image counts as billed in the context measures", () => {
  it("compact.jsonl before its last compaction: each of the three screenshots by its pixel size, not its base64 length", async () => {
    // The session as it was before pi's last compaction (its first 1,012 lines): the screenshots are in the context.
    const lines = fs.readFileSync(path.join(REAL_SESSIONS, "compact.jsonl"), "utf8").split("\n");
    const file = path.join(tempDir(), "screenshots.jsonl");
    fs.writeFileSync(file, `${lines.slice(0, 1012).join("\n")}\n`);
    settle(file);
    const screenshots = new Map<string, number | "pi-estimate">();
    const sizes = [
      [1432, 346],
      [1244, 392],
      [1428, 412],
    ];
    for (const line of lines.filter((text) => text.includes('"type":"image"'))) {
      for (const part of JSON.parse(line).message.content) if (part.type === "image") screenshots.set(part.data, byPixels(...(sizes[screenshots.size] as [number, number])));
    }
    expect([...screenshots.values()]).toEqual([661, 651, 785]);
    const expected = await billedContext(file, screenshots);
    expect(expected.images).toEqual({ count: 3, tokens: 2097, byRule: { pixels: 3, "pi-estimate": 0 } });
    await expectBilled(file, expected);
    const stats = statsJson(file);
    expect(stats.context.before).toEqual({ messages: stats.context.before.messages, chars: expected.chars, tokens: Math.round(expected.chars / 4), images: expected.images });
    // Their base64 alone is 230,536 characters: counted as text, ~57,600 tokens.
    const base64 = [...screenshots.keys()].reduce((sum, data) => sum + data.length, 0);
    expect(base64).toBe(230_536);
    const text = runCli(["stats", file]).out;
    expect(text).toContain("messages; 3 images as ~2,097 tokens (3 by pixel size)");
    // The compact report (its model is the file route's lightened one) measures the same.
    const report = runCli(["compact", "--dry-run", "--json", file]);
    const context = JSON.parse(report.out).sessions[0].report.context;
    expect(context.beforeChars).toBe(expected.chars);
    expect(context.beforeImages).toEqual(expected.images);
  }, 120_000);

  it("a session of PNG, JPEG, GIF and WebP images and one that is not an image: the same on every route, before and after compaction", async () => {
    const images = {
      png: pngBytes(1000, 1000, 60_000).toString("base64"),
      jpeg: jpegBytes(1920, 1080, 40_000, 1500).toString("base64"),
      farJpeg: jpegBytes(640, 480, 40_000, 5000).toString("base64"),
      gif: gifBytes(640, 480, 20_000).toString("base64"),
      webp: webpBytes("VP8X", 300, 200, 30_000).toString("base64"),
      broken: "iVBORw0KGgo" + "A".repeat(50_000),
    };
    const tokens = new Map<string, number | "pi-estimate">([
      [images.png, byPixels(1000, 1000)],
      [images.jpeg, 1600], // scaled to 1568 × 882: 1,844 tokens, capped at 1,600
      [images.farJpeg, "pi-estimate"], // its frame header lies past the head that is read
      [images.gif, byPixels(640, 480)],
      [images.webp, byPixels(300, 200)],
      [images.broken, "pi-estimate"],
    ]);
    const s = new SessionBuilder();
    const read = (id: string, image: string, mimeType: string) => {
      s.message({ role: "assistant", content: [{ type: "toolCall", id, name: "read", arguments: { path: `/shots/${id}` } }], stopReason: "toolUse", timestamp: s.tick() });
      s.message({ role: "toolResult", toolCallId: id, toolName: "read", content: [{ type: "text", text: `Read image file [${mimeType}]` }, { type: "image", data: image, mimeType }], isError: false, timestamp: s.tick() });
    };
    s.user("look at the screenshots");
    read("r1", images.png, "image/png");
    read("r2", images.jpeg, "image/jpeg");
    read("r3", images.broken, "image/png");
    s.reply("seen");
    s.message({ role: "user", content: [{ type: "text", text: "and this one" }, { type: "image", data: images.gif, mimeType: "image/gif" }], timestamp: s.tick() });
    read("r4", images.webp, "image/webp");
    read("r5", images.farJpeg, "image/jpeg");
    s.reply("seen too");
    s.user("thanks");
    s.reply("welcome");
    const file = s.writeTemp();
    settle(file);

    const before = await billedContext(file, tokens);
    expect(before.images).toEqual({ count: 6, tokens: 1334 + 1600 + 1200 + 410 + 80 + 1200, byRule: { pixels: 4, "pi-estimate": 2 } });
    await expectBilled(file, before);

    const run = runCli(["compact", file, "--workers", "0", "--json"]);
    expect(run.status, run.stderr).toBe(0);
    const report = JSON.parse(run.out).sessions[0].report;
    expect(report.context.beforeChars).toBe(before.chars);
    expect(report.context.beforeImages).toEqual(before.images);
    const after = await billedContext(file, tokens);
    expect(report.context.afterChars).toBe(after.chars);
    expect(report.context.afterImages).toEqual(after.images);
    // The chains' outputs are archived; the user's image stays in the context.
    expect(after.images).toEqual({ count: 1, tokens: 410, byRule: { pixels: 1, "pi-estimate": 0 } });
    await expectBilled(file, after);
  }, 120_000);

  it("the open-chain policy counts a screenshot output by its pixels: five of them pass a trigger their text alone never would", async () => {
    const s = new SessionBuilder();
    s.user("click through the app");
    for (let i = 0; i < 5; i++) {
      const id = `shot${i}`;
      s.message({ role: "assistant", content: [{ type: "toolCall", id, name: "screenshot", arguments: {} }], stopReason: "toolUse", timestamp: s.tick() });
      const data = pngBytes(1000, 1000, 60_000, i + 1).toString("base64");
      s.message({ role: "toolResult", toolCallId: id, toolName: "screenshot", content: [{ type: "text", text: "Read image file [image/png]" }, { type: "image", data, mimeType: "image/png" }], isError: false, timestamp: s.tick() });
    }
    const file = s.writeTemp();
    settle(file);
    const settings = { enabled: true, triggerTokens: 5000, keepRecent: 1, minReclaimTokens: 1000 };
    // Outside the keep window: four outputs of 27 text characters (7 tokens) and a 1000 × 1000 image (1,334 tokens).
    const expected = { reason: "archive", outsideTokens: 4 * (7 + 1334) };
    for (const model of [await loadSessionModel(file), await lightenedModel(file)]) {
      const open = detectOpenChain(model.messages);
      expect(open).toBeDefined();
      const decision = openChainDecision(open!, model.messages, model.state, new Set(), settings);
      expect({ reason: decision.reason, outsideTokens: decision.outsideTokens }).toEqual(expected);
      expect(decision.keys).toHaveLength(4);
      // Each stub, as the plan estimates it, says which image the output held.
      const stubs = decision.keys.map((key, i) => {
        const result = model.messages.find((m) => m.role === "toolResult" && m.toolCallId === `shot${i}`)!;
        expect(key).toBe(`shot${i}@${result.timestamp}`);
        const parts = nonTextParts(result.content).map(({ at, part }) => ({ at, kind: "inline" as const, part }));
        const stub = archivedOutputStubText({ toolName: "screenshot", args: {}, resultText: "Read image file [image/png]", parts }, "t999999");
        expect(stub).toMatch(/ It held 1 image: image\/png 1000\u00d71000 \d+ KB\. /);
        return estimateTokens(stub);
      });
      expect(decision.reclaimTokens).toBe(decision.outsideTokens - stubs.reduce((a, b) => a + b, 0));
    }
  }, 120_000);
});
