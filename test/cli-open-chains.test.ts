/**
 * `chainpress compact` on a session whose last chain is still open (a crashed or abandoned run):
 * the openChains settings from settings.json apply, `--no-open-chains` turns the step off.
 */

import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CUSTOM_TYPE_INDEX } from "../src/core/custom-types.js";
import { ensureBuilt, removeTempDirs, runCli, settle, tempDir } from "./helpers/cli-harness.js";
import { calls, customEntries, SessionBuilder } from "./helpers/session-builder.js";

beforeAll(() => ensureBuilt());
afterAll(() => removeTempDirs());

/** An abandoned run: one prompt, 40 calls of ~600 tokens, no reply. */
function abandonedSession(dir: string): string {
  const s = new SessionBuilder();
  s.user("long run");
  for (const call of calls("o", 40, 2400)) s.turn([call]);
  const file = path.join(dir, "abandoned.jsonl");
  fs.writeFileSync(file, s.toJsonl(), { mode: 0o644 });
  settle(file);
  return file;
}

function agentDir(settings: unknown): string {
  const dir = tempDir("chainpress-agent-");
  fs.writeFileSync(path.join(dir, "settings.json"), JSON.stringify({ chainpress: settings }));
  return dir;
}

describe("compact: a session whose last chain is open", () => {
  it("archives the older outputs per the settings file, keeping the newest keepRecent", () => {
    const dir = tempDir();
    const file = abandonedSession(dir);
    const env = { PI_CODING_AGENT_DIR: agentDir({ openChains: { triggerTokens: 5000, keepRecent: 12, minReclaimTokens: 2000 } }) };
    const run = runCli(["compact", file, "--json", "--workers", "0"], { env });
    expect(run.status, run.stderr).toBe(0);
    const report = JSON.parse(run.out).sessions[0].report;
    expect(report.openChain.decision).toMatchObject({ reason: "archive" });
    expect(report.openChain.refs).toHaveLength(28);
    expect(report.context.afterChars).toBeLessThan(report.context.beforeChars / 2);
    const index = customEntries(file, CUSTOM_TYPE_INDEX);
    expect(index).toHaveLength(1);
    expect(index[0]!.data.toolCalls.map((r: { toolCallId: string }) => r.toolCallId)).toEqual(Array.from({ length: 28 }, (_, i) => `o_${i}`));
    // A rerun with nothing new appends nothing.
    settle(file);
    const size = fs.statSync(file).size;
    expect(runCli(["compact", file, "--json", "--workers", "0"], { env }).status).toBe(0);
    expect(fs.statSync(file).size).toBe(size);
  });

  it("leaves it whole with --no-open-chains, and with openChains.enabled false", () => {
    const dir = tempDir();
    const file = abandonedSession(dir);
    const bytes = fs.readFileSync(file);
    const off = runCli(["compact", file, "--json", "--workers", "0", "--no-open-chains"]);
    expect(off.status, off.stderr).toBe(0);
    expect(JSON.parse(off.out).sessions[0].report.openChain).toBeUndefined();
    expect(fs.readFileSync(file)).toEqual(bytes);
    settle(file);
    const env = { PI_CODING_AGENT_DIR: agentDir({ openChains: { enabled: false } }) };
    expect(runCli(["compact", file, "--workers", "0"], { env }).status).toBe(0);
    expect(fs.readFileSync(file)).toEqual(bytes);
  });
});
