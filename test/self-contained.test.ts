/**
 * A fresh clone must test and run with nothing beside it (issue 12 item 1): the real sessions
 * are bundled with their provenance, and no source, test, script or README points outside the
 * repository. bench/ may use the peers folder of the shared material when present (it skips
 * otherwise), so it is not scanned here.
 */

import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { REAL_SESSIONS_DIR, REPO_ROOT } from "./helpers/fixture-paths.js";

const README = path.join(REAL_SESSIONS_DIR, "README.md");

/** `| file | from | bytes | sha256 | …` rows of the fixture README: the one place the digests are written. */
function documentedFixtures(): Array<{ file: string; bytes: number; sha256: string }> {
  const rows = fs.readFileSync(README, "utf8").split("\n").filter((line) => /^\| \S+\.jsonl \|/.test(line));
  return rows.map((row) => {
    const cells = row.split("|").map((cell) => cell.trim());
    return { file: cells[1]!, bytes: Number(cells[3]!.replace(/,/g, "")), sha256: cells[4]! };
  });
}

function filesUnder(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath, entry.name));
}

// Built from parts so this file does not match its own scan.
const PARENT_SHARED = new RegExp(["\\.\\.[/\\\\]", "shared\\b", "|", "[\"']\\.\\.[\"']\\s*,\\s*[\"']", "shared[\"']"].join(""));

describe("a fresh clone needs nothing beside it", () => {
  it("bundles the four real sessions byte for byte as documented, with provenance and licence", () => {
    const documented = documentedFixtures();
    expect(documented.map((f) => f.file).sort()).toEqual(["before-compaction.jsonl", "compact.jsonl", "large-session.jsonl", "session.jsonl"]);
    for (const { file, bytes, sha256 } of documented) {
      const data = fs.readFileSync(path.join(REAL_SESSIONS_DIR, file));
      expect(data.length, file).toBe(bytes);
      expect(createHash("sha256").update(data).digest("hex"), file).toBe(sha256);
    }
    const readme = fs.readFileSync(README, "utf8");
    expect(readme).toMatch(/## Provenance[\s\S]*badlogic\/pi-mono/);
    expect(readme).toMatch(/## Licence\s+MIT/);
  });

  it("no source, test, CI script, package script or README refers to the folder beside the checkout", () => {
    const scanned = [
      ...filesUnder(path.join(REPO_ROOT, "src")),
      ...filesUnder(path.join(REPO_ROOT, "test")),
      ...filesUnder(path.join(REPO_ROOT, ".ci")),
      path.join(REPO_ROOT, "package.json"),
      path.join(REPO_ROOT, "README.md"),
    ];
    const offenders = scanned.filter((file) => PARENT_SHARED.test(fs.readFileSync(file, "utf8"))).map((file) => path.relative(REPO_ROOT, file));
    expect(offenders).toEqual([]);
  });
});
