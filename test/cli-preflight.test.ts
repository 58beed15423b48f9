// Preflight's quiet check reads the session's modification time against the clock: a write by
// another process in the current millisecond must read as recent, not as clock skew.

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { checkQuiet, QUIET_MS } from "../src/cli/preflight.js";

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "chainpress-preflight-"));
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

function sessionWrittenAt(mtimeMs: number): string {
  const file = path.join(fs.mkdtempSync(path.join(scratch, "s-")), "session.jsonl");
  fs.writeFileSync(file, "{}\n");
  fs.utimesSync(file, mtimeMs / 1000, mtimeMs / 1000);
  return file;
}

describe("checkQuiet", () => {
  const now = 1_800_000_000_000;

  it("reads a modification a fraction of a millisecond ahead of Date.now() as just now", () => {
    const file = sessionWrittenAt(now + 0.6);
    expect(() => checkQuiet(file, false, now)).toThrow(/modified 0\.0 s ago; pi may still be writing it/);
  });

  it("names a modification time seconds ahead of the clock as in the future", () => {
    const file = sessionWrittenAt(now + 30_000);
    expect(() => checkQuiet(file, false, now)).toThrow(/modified in the future/);
  });

  it("says how long ago a recent write was, and lets a quiet or forced file through", () => {
    const file = sessionWrittenAt(now - 2_500);
    expect(() => checkQuiet(file, false, now)).toThrow(/modified 2\.5 s ago/);
    expect(() => checkQuiet(file, true, now)).not.toThrow();
    expect(() => checkQuiet(file, false, now - 2_500 + QUIET_MS)).not.toThrow();
  });
});
