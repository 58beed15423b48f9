/**
 * The archive map in `chainpress render` on the bundled session: every compressed chain carries
 * one, the same entries give the same bytes from call to call and for any worker count, the
 * session entries never hold it (they stay upstream's), and the setting turns it off.
 */

import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAP_HEADER } from "../src/core/archive-map.js";
import { ensureBuilt, removeTempDirs, runCli, settle, tempDir } from "./helpers/cli-harness.js";
import { REPO_ROOT } from "./helpers/fixture-paths.js";

beforeAll(() => ensureBuilt());
afterAll(() => removeTempDirs());

const BUNDLED = path.join(REPO_ROOT, "fixtures", "large-sessions", "default-session.jsonl");

function compacted(workers: number): string {
  const file = path.join(tempDir(`chainpress-map-${workers}-`), "s.jsonl");
  fs.copyFileSync(BUNDLED, file);
  settle(file);
  const run = runCli(["compact", file, "--workers", String(workers)]);
  expect(run.status, run.stderr).toBe(0);
  return file;
}

describe("the archive map in the rendered context", () => {
  let inline: string;
  let pooled: string;
  beforeAll(() => {
    inline = compacted(0);
    pooled = compacted(2);
  });

  it("is under every compressed chain's body, and nowhere in the session file", () => {
    const rendered = runCli(["render", inline, "--text"]);
    expect(rendered.status, rendered.stderr).toBe(0);
    const text = rendered.out;
    const chains = text.split("<compressed-chain ").length - 1;
    expect(chains).toBe(8);
    expect(text.split(MAP_HEADER).length - 1).toBe(chains);
    expect(fs.readFileSync(inline, "utf8")).not.toContain("Map (ref tool target");
  });

  it("renders the same bytes from call to call and for 0 or 2 workers", () => {
    const first = runCli(["render", inline]).stdout;
    expect(runCli(["render", inline]).stdout.equals(first)).toBe(true);
    // Spill paths differ between the two copies' folders, and a compressed chain's time is when it
    // was compressed; nothing else may.
    const normalise = (file: string) =>
      runCli(["render", file, "--text"])
        .out.replaceAll(path.dirname(file), "<dir>")
        .replace(/── user · \S+ ──\n<compressed-chain/g, "── user · <compressed at> ──\n<compressed-chain");
    expect(normalise(pooled)).toBe(normalise(inline));
  });

  it("is off with archiveMap.enabled false", () => {
    const agent = tempDir("chainpress-map-agent-");
    fs.writeFileSync(path.join(agent, "settings.json"), JSON.stringify({ chainpress: { archiveMap: { enabled: false } } }));
    const off = runCli(["render", inline, "--text"], { env: { PI_CODING_AGENT_DIR: agent } });
    expect(off.status, off.stderr).toBe(0);
    expect(off.out).toContain("<compressed-chain ");
    expect(off.out).not.toContain(MAP_HEADER);
  });
});
