// Issue 46 item 3 in pi: `/pruner status` and `/pruner compact` count a screenshot as billed (by
// its pixel size), not its base64 characters. Two sessions that differ only by their images,
// played into pi's real SessionManager, differ by exactly the images' cost.
import fs from "node:fs";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { afterEach, describe, expect, it } from "vitest";
import { IMAGES_MAP_HEADER, MAP_HEADER } from "../src/core/archive-map.js";
import { PiHost, tempAgentDir } from "./helpers/pi-host.js";
import { gifBytes, pngBytes } from "./helpers/image-bytes.js";
import { chainMessages, MessageClock } from "./helpers/pi-session.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** A 1000 × 1000 PNG (1,334 tokens) whose base64 is some 80,000 characters. */
const SCREENSHOT = { type: "image", data: pngBytes(1000, 1000, 60_000).toString("base64"), mimeType: "image/png" };
const SCREENSHOT_TOKENS = 1334;
/** JSON characters an image part adds to its message besides its data: the comma and its other fields. */
const PART_CHARS = 1 + JSON.stringify({ ...SCREENSHOT, data: "" }).length - 2;

/** Four chains of one screenshot read each (or the same reads without the image). */
async function playScreenshots(withImages: boolean): Promise<PiHost> {
  const agentDir = tempAgentDir();
  dirs.push(agentDir);
  const host = await PiHost.start(SessionManager.inMemory(), agentDir);
  const clock = new MessageClock();
  for (const label of ["c1", "c2", "c3", "c4"]) {
    for (const message of chainMessages(clock, label, [`Read image file [image/png] ${label} `.repeat(20)], "read") as Array<Record<string, any>>) {
      if (withImages && message.role === "toolResult") message.content = [...message.content, SCREENSHOT];
      await host.message(message);
    }
    await host.endRun();
    await host.idle();
  }
  return host;
}

const tokensOn = (line: string) => [...line.matchAll(/~([\d,]+)/g)].map((match) => Number(match[1]!.replace(/,/g, "")));

describe("images in pi's context", () => {
  it("/pruner status counts each screenshot by its pixel size and says so", async () => {
    const [plain, shots] = [await playScreenshots(false), await playScreenshots(true)];
    const contextLine = async (host: PiHost) => {
      await host.command("/pruner status");
      return host.notices.at(-1)!.message.split("\n")[3]!;
    };
    const [without, withImages] = [await contextLine(plain), await contextLine(shots)];
    expect(without).toMatch(/^context: ~[\d,]+ -> ~[\d,]+ tokens \(~[\d,]+ saved\)$/);
    // The newest three chains are still whole (window 3): their screenshots are in the context.
    expect(withImages).toMatch(/^context: ~[\d,]+ -> ~[\d,]+ tokens \(~[\d,]+ saved\); 3 images as ~4,002 tokens \(3 by pixel size\)$/);
    const [rawWithout, renderedWithout] = tokensOn(without);
    const [raw, rendered] = tokensOn(withImages);
    // Four screenshots before the render, three after it; rounding to tokens may move a figure by one.
    expect(Math.abs(raw! - rawWithout! - (4 * (PART_CHARS + 4 * SCREENSHOT_TOKENS)) / 4)).toBeLessThanOrEqual(1);
    // And the compressed chain's map marks its one screenshot read (`t1*`), its legend saying so.
    const mapMarkChars = IMAGES_MAP_HEADER.length - MAP_HEADER.length + 1;
    expect(Math.abs(rendered! - renderedWithout! - (3 * (PART_CHARS + 4 * SCREENSHOT_TOKENS) + mapMarkChars) / 4)).toBeLessThanOrEqual(1);
  });

  it("/pruner compact reclaims each dropped screenshot's billed tokens", async () => {
    const reclaimed = async (host: PiHost) => {
      await host.command("/pruner compact");
      const notice = host.notices.at(-1)!.message;
      expect(notice).toMatch(/^pruner: compacted 3 chains \(b2, b3, b4\), reclaimed ~\d+ tokens$/);
      return Number(/~(\d+) tokens/.exec(notice)![1]);
    };
    const [without, withImages] = [await reclaimed(await playScreenshots(false)), await reclaimed(await playScreenshots(true))];
    expect(withImages - without).toBe(3 * SCREENSHOT_TOKENS);
  });

  it("a user's pasted image that is not a known format counts at pi's estimate", async () => {
    const agentDir = tempAgentDir();
    dirs.push(agentDir);
    const host = await PiHost.start(SessionManager.inMemory(), agentDir);
    const clock = new MessageClock();
    const messages = chainMessages(clock, "c1", ["out"]) as Array<Record<string, any>>;
    const gif = { type: "image", data: gifBytes(640, 480, 30_000).toString("base64"), mimeType: "image/gif" };
    messages[0]!.content = [...messages[0]!.content, gif, { type: "image", data: "bm90IGFuIGltYWdl".repeat(1000), mimeType: "image/bmp" }];
    for (const message of messages) await host.message(message);
    await host.endRun();
    await host.idle();
    await host.command("/pruner status");
    expect(host.notices.at(-1)!.message.split("\n")[3]).toMatch(/; 2 images as ~1,610 tokens \(1 by pixel size, 1 at pi's estimate\)$/);
  });
});
