/**
 * The README's "Guarantees" section is a list of promises, and each has tests of its own. This
 * file names them: a promise added without tests, a test renamed or removed from under its
 * promise, fails here. The named tests themselves run with the rest of the suite.
 */

import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "..");

/** Promise (its bold title in the README) → the tests that hold it: file and a fragment of a test's title. */
const GUARANTEE_TESTS: Record<string, ReadonlyArray<readonly [file: string, title: string]>> = {
  "Durable, fail-closed.": [
    ["test/crash-kill-points.test.ts", "SIGKILL at every write point"],
    ["test/fault-injection.test.ts", "faults inside one compaction"],
    ["test/spill-confinement.test.ts", "skipped as disk-full, not no-summary"],
  ],
  "Compression never grows the context.": [
    ["test/chain-shrink.test.ts", "leaves a session of 50 one-call chains with tiny outputs byte for byte"],
    ["test/chain-shrink.test.ts", "leaves one-call chains with tiny outputs alone, and compresses the one that shrinks"],
    ["test/chain-shrink.test.ts", "render's context never grows after compact"],
  ],
  "Deterministic.": [
    ["test/compress-worker-count.test.ts", "0, 1, 2 and 4 workers"],
    ["test/compact-routes.test.ts", "inline (read whole), with a pool (scanned) and with a pool that leaves small chains to the calling thread write the same bytes"],
    ["test/archive-parts.test.ts", "the CLI with 0, 1 and 2 workers, the live flush's route and pi's compact route give the same records"],
  ],
  "Every content part is archived.": [
    ["test/archive-parts.test.ts", "the content hash covers them"],
    ["test/archive-parts.test.ts", "compact.jsonl: the three screenshots"],
    ["test/crash-kill-points.test.ts", "SIGKILL at every write point of a part spill file"],
    ["test/parts-memory.test.ts", "200 screenshot reads"],
    ["test/query-parts.test.ts", "attaches an output's images after its text, byte for byte"],
    ["test/query-parts.test.ts", "a part whose spill file is missing"],
    ["test/e2e-pi-image.test.ts", "context_tree_query gives both images back after the text, byte for byte"],
  ],
  "Images counted as billed.": [
    ["test/image-context-size.test.ts", ""],
    ["test/extension-image-tokens.test.ts", ""],
  ],
  "Only regular files.": [
    ["test/hostile-paths.test.ts", "the files compact writes beside the session"],
    ["test/hostile-paths.test.ts", "compact --out that names the input"],
  ],
  "No link followed.": [
    ["test/session-links.test.ts", "compact refuses it, with --force"],
    ["test/session-links.test.ts", "compact resolves the link once"],
    ["test/session-links.test.ts", "work through a linked home"],
    ["test/spill-confinement.test.ts", "the blob folder is a real folder in the session's folder"],
    ["test/spill-confinement.test.ts", "a blob folder that is a symbolic link is not read through"],
  ],
  "The archive is confined.": [
    ["test/spill-confinement.test.ts", "refuse a record that names another file"],
    ["test/spill-confinement.test.ts", "never at the recorded old path"],
    ["test/spill-confinement.test.ts", "neither digest nor content hash"],
    ["test/hostile-paths.test.ts", "reading a spill file is bounded"],
    ["test/query-parts.test.ts", "a blob folder that is a link to the real one"],
  ],
  "Nothing replaced.": [["test/spill-confinement.test.ts", "a second session with the same id in the folder fails closed"]],
  "`--out` is atomic and complete.": [
    ["test/out-copy.test.ts", "--out is atomic"],
    ["test/out-copy.test.ts", "--out is self-contained"],
  ],
  "pi 1.6's context edits are honoured, whatever their shape.": [
    ["test/projection-matches-pi.test.ts", ""],
    ["test/context-edits-archive.test.ts", ""],
    ["test/malformed-edits-projection.test.ts", ""],
    ["test/malformed-edits-archive.test.ts", "never gives back the original"],
    ["test/query-parts.test.ts", "a context edit of an archived output hides its parts too"],
  ],
  "Any depth.": [["test/deep-nesting.test.ts", ""]],
  "Any search.": [
    ["test/search-literal.test.ts", "a literal of any length"],
    ["test/archive-search.test.ts", ""],
  ],
  "Unknown entry kinds": [["test/hostile-paths.test.ts", "entry kinds chainpress does not know"]],
  "What it costs on disk.": [
    ["test/pi-sees-our-writes.test.ts", "compact appends under the leaf pi computes"],
    ["test/cli-compact.test.ts", "a second run appends nothing"],
  ],
  "Sessions open in pi.": [["test/e2e-live-lock.test.ts", "refuses, skips or notes a session open in pi"]],
};

/** The bold titles that open the bullets of the README's "Guarantees" section. */
function readmePromises(): string[] {
  const readme = fs.readFileSync(path.join(root, "README.md"), "utf8");
  const section = /^## Guarantees\n([\s\S]*?)^## /m.exec(readme);
  if (!section) throw new Error("README.md has no '## Guarantees' section");
  return [...section[1]!.matchAll(/^- \*\*(.+?)\*\*/gm)].map((match) => match[1]!);
}

describe("the README's guarantees", () => {
  it("each promise has tests named here, and each named test exists", () => {
    const promises = readmePromises();
    expect(promises.length).toBeGreaterThan(5);
    expect(promises.filter((promise) => GUARANTEE_TESTS[promise] === undefined), "promises without tests").toEqual([]);
    expect(Object.keys(GUARANTEE_TESTS).filter((promise) => !promises.includes(promise)), "tests of promises the README no longer makes").toEqual([]);
    for (const [promise, tests] of Object.entries(GUARANTEE_TESTS)) {
      for (const [file, title] of tests) {
        const source = fs.readFileSync(path.join(root, file), "utf8");
        expect(/\b(it|describe)\(/.test(source), `${promise}: ${file} holds tests`).toBe(true);
        if (title !== "") expect(source.includes(title), `${promise}: ${file} has a test titled "…${title}…"`).toBe(true);
      }
    }
  });
});
