/**
 * JSON nested 5,000 and 100,000 levels deep (a JSONL line holds that, and pi's loader reads it) in
 * a call's arguments, a result's `details`, user and assistant content, a custom entry's data, a
 * custom message's details and a `context_edit` replacement: every command works on such a
 * session through the built CLI, `render` gives pi 1.6's own context for it, and the deep value
 * comes through byte for byte where the model sees it. V8's JSON.stringify, structured clone and
 * msgpackr recurse and run out of stack near 1,300 to 4,000 levels; JSON.parse does not.
 */

import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBuilt, pruneEntries, removeTempDirs, runCli, settle, tempDir } from "./helpers/cli-harness.js";
import { DEEP_PLACES, DEEP_TEXTS, deepJson, deepSession, type DeepPlace } from "./helpers/deep-session.js";
import { piContexts, type PiContextMessage } from "./helpers/pi-loader.js";
import { reduceRendered, renderLines } from "./helpers/render-shape.js";

beforeAll(() => ensureBuilt());
afterAll(() => removeTempDirs());

const DEPTHS = [5_000, 100_000];
const TIMEOUT = 600_000;

/** Places whose deep value is in the context pi builds (a custom entry's data is not). */
const IN_CONTEXT: readonly DeepPlace[] = ["arguments", "details", "user", "assistant", "custom-message", "edit", "edited-chain-arguments"];
/** Places where a call's arguments hold the deep value (t2's). */
const IN_ARGS: readonly DeepPlace[] = ["arguments", "edited-chain-arguments"];

/** Each index entry's line up to its own id: its type and data, as written. */
function indexData(file: string): string[] {
  const lines = fs.readFileSync(file, "utf8").split("\n");
  return lines.filter((line) => line.includes('"customType":"context-prune-index"')).map((line) => line.slice(0, line.lastIndexOf(',"id":')));
}

function ok(args: string[], env: NodeJS.ProcessEnv = {}): string {
  const run = runCli(args, { env });
  expect(run.stderr, `chainpress ${args.join(" ")}`).not.toMatch(/call stack|internal error/i);
  expect(run.status, `chainpress ${args.join(" ")}: ${run.stderr}`).toBe(0);
  return run.out;
}

describe.each(DEPTHS)("JSON nested %i levels deep", (depth) => {
  let dir: string;
  const files = new Map<DeepPlace, string>();
  let pi: PiContextMessage[][];

  beforeAll(async () => {
    dir = tempDir(`chainpress-deep-${depth}-`);
    for (const place of DEEP_PLACES) {
      const file = path.join(dir, `${place}.jsonl`);
      fs.writeFileSync(file, deepSession(place, depth));
      settle(file);
      files.set(place, file);
    }
    pi = await piContexts("1.6.0", [...files.values()]);
  }, TIMEOUT);

  it("render gives pi 1.6's context, with the deep value byte for byte; stats and the transcript work", () => {
    const deep = deepJson(depth);
    for (const [i, place] of DEEP_PLACES.entries()) {
      const file = files.get(place)!;
      const out = ok(["render", file]);
      expect(renderLines(out).map(reduceRendered), place).toEqual(pi[i]);
      expect(out.includes(deep), place).toBe(IN_CONTEXT.includes(place));
      ok(["render", "--text", file]);
      const stats = JSON.parse(ok(["stats", "--json", file])) as { chains: { closed: number } };
      expect(stats.chains.closed, place).toBe(2);
    }
  }, TIMEOUT);

  it("compact archives both chains inline and with workers; then stats, render and every query read it", () => {
    for (const place of DEEP_PLACES) {
      const file = files.get(place)!;
      const inline = path.join(dir, `inline-${place}.jsonl`);
      fs.copyFileSync(file, inline);
      settle(inline);
      for (const [target, workers] of [[inline, "0"], [file, "2"]] as const) {
        ok(["compact", target, "--workers", workers]);
        expect(pruneEntries(target).filter((e) => e.customType === "context-prune-chain"), `${place} --workers ${workers}`).toHaveLength(2);
      }
      // The same index data either way (entries' own ids and times aside), compared as text:
      // a deep value is beyond a recursive comparison.
      expect(indexData(inline), place).toEqual(indexData(file));

      ok(["stats", file]);
      expect(renderLines(ok(["render", file])).length, place).toBeGreaterThan(0);
      const output = place === "edit" ? DEEP_TEXTS.edited : DEEP_TEXTS.output(1);
      // t2: the deep chain's second call (its arguments or details are the deep ones).
      expect(ok(["query", file, "t2"]), place).toContain(output);
      expect(ok(["query", file, "one_call_1"]), place).toContain(output);
      expect(ok(["query", file, "t2", "--raw"]), place).toBe(output);
      expect(JSON.parse(ok(["query", file, "t2", "--offset", "1", "--json"])).text, place).toBe(output);
      const search = JSON.parse(ok(["query", file, "--search", "bottom", "--json"])) as { hits: Array<{ ref: string }> };
      // The leaf string lies deep in the call's arguments: the search finds the call by them.
      expect(search.hits.map((hit) => hit.ref), place).toEqual(IN_ARGS.includes(place) ? ["t2"] : []);
      if (place === "edited-chain-arguments") expect(ok(["query", file, "t1", "--raw"]), place).toBe(DEEP_TEXTS.edited);
      ok(["query", file, "--search", "deep output"]);
    }
  }, TIMEOUT);

  it("an open chain whose archived call holds the deep arguments closes and is compressed, inline and with workers", () => {
    // Open-chain steps archive every output but the newest as soon as they can.
    const agentDir = path.join(dir, "agent");
    fs.mkdirSync(agentDir, { recursive: true });
    fs.writeFileSync(path.join(agentDir, "settings.json"), JSON.stringify({ chainpress: { openChains: { triggerTokens: 0, keepRecent: 1, minReclaimTokens: 0 } } }));
    const env = { PI_CODING_AGENT_DIR: agentDir };
    const lines = deepSession("arguments", depth).trimEnd().split("\n");
    // The deep chain, still open: up to its last tool result.
    const open = lines.slice(0, lines.findIndex((line) => line.includes('"toolCallId":"one_call_2"')) + 1);
    for (const workers of ["0", "2"]) {
      const file = path.join(dir, `open-${workers}.jsonl`);
      fs.writeFileSync(file, `${open.join("\n")}\n`);
      settle(file);
      ok(["compact", file, "--workers", workers], env);
      expect(pruneEntries(file).filter((e) => e.customType === "context-prune-index"), `--workers ${workers}`).toHaveLength(1);
      const leaf = fs.readFileSync(file, "utf8").trimEnd().split("\n").pop()!;
      const parentId = (JSON.parse(leaf) as { id: string }).id;
      const reply = { type: "message", id: "f0000001", parentId, timestamp: "2026-11-26T00:00:00.000Z", message: { role: "assistant", content: [{ type: "text", text: "one done" }], stopReason: "stop", timestamp: Date.UTC(2026, 10, 26) } };
      fs.appendFileSync(file, `${JSON.stringify(reply)}\n`);
      settle(file);
      ok(["compact", file, "--workers", workers], env);
      expect(pruneEntries(file).filter((e) => e.customType === "context-prune-chain"), `--workers ${workers}`).toHaveLength(1);
      expect(ok(["query", file, "t2", "--raw"], env)).toBe(DEEP_TEXTS.output(1));
    }
  }, TIMEOUT);
});
