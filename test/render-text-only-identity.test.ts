/**
 * Issue 46 changes what the model is told about archived images only: for text-only sessions the
 * render (maps, closed-chain bodies, open-chain stubs) and a search's text stay byte for byte what
 * they were before it. The digests were taken from the code before issue 46's map, stub and search
 * changes, on the bundled session compacted and on an abandoned run whose open chain is archived.
 */

import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBuilt, removeTempDirs, runCli, settle, tempDir } from "./helpers/cli-harness.js";
import { REPO_ROOT } from "./helpers/fixture-paths.js";
import { calls, SessionBuilder } from "./helpers/session-builder.js";

beforeAll(() => ensureBuilt());
afterAll(() => removeTempDirs());

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

/** The rendered text with what legitimately varies masked: the temp folder, and when a chain was compressed. */
function renderedText(file: string, env: NodeJS.ProcessEnv = {}): string {
  const run = runCli(["render", file, "--text"], { env });
  expect(run.status, run.stderr).toBe(0);
  return run.out.replaceAll(path.dirname(file), "<dir>").replace(/── user · \S+ ──\n<compressed-chain/g, "── user · <compressed at> ──\n<compressed-chain");
}

describe("text-only sessions render as before issue 46", () => {
  it("the bundled session, compacted: maps and bodies", () => {
    const file = path.join(tempDir("chainpress-identity-"), "s.jsonl");
    fs.copyFileSync(path.join(REPO_ROOT, "fixtures", "large-sessions", "default-session.jsonl"), file);
    settle(file);
    const run = runCli(["compact", file, "--workers", "0"]);
    expect(run.status, run.stderr).toBe(0);
    const text = renderedText(file);
    expect(text).toContain("Map (ref tool target; ! = failed)");
    expect(sha256(text)).toBe("aa422448e4f5a0b6cddafa5330171cda281accc57f5fe8e23beeeeaf71e66999");
    const search = runCli(["query", file, "--search", "test", "--limit", "20"]);
    expect(search.status, search.stderr).toBe(0);
    expect(sha256(search.out)).toBe("5f90fe022bfabd38e8aee44fa773a7301763efb4ee7dd744a927f38ff8ed3cc9");
  });

  it("an abandoned run whose open chain is archived: the open-chain stubs", () => {
    const dir = tempDir("chainpress-identity-open-");
    const s = new SessionBuilder();
    s.chain("first", calls("c", 3, 400, "read"));
    s.user("long run");
    // Spilled outputs and inline ones: both stubs.
    for (const call of [...calls("o", 15, 2400), ...calls("p", 15, 1600)]) s.turn([call]);
    const file = path.join(dir, "abandoned.jsonl");
    fs.writeFileSync(file, s.toJsonl());
    settle(file);
    const agent = tempDir("chainpress-identity-agent-");
    fs.writeFileSync(path.join(agent, "settings.json"), JSON.stringify({ chainpress: { openChains: { triggerTokens: 5000, keepRecent: 6, minReclaimTokens: 2000 } } }));
    const env = { PI_CODING_AGENT_DIR: agent };
    const run = runCli(["compact", file, "--workers", "0", "--spill-threshold", "2000"], { env });
    expect(run.status, run.stderr).toBe(0);
    const text = renderedText(file, env);
    expect(text).toContain("[Archived output of bash echo o 0 (");
    expect(sha256(text)).toBe("bc7a7872af8f7576c144ae46e7a36b1a5b82b71f01337e4b9ce6dc1ee9c2ad83");
  });
});
