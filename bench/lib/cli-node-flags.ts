/**
 * The node flags the `chainpress` executable runs with, read from its shebang
 * (`#!/usr/bin/env -S node <flags>`, src/cli/main.ts): the bench runs the CLI as its bin runs.
 */

import fs from "node:fs";

export function cliNodeFlags(cliFile: string): string[] {
  const first = fs.readFileSync(cliFile, "utf8").split("\n", 1)[0]!;
  const words = first.replace(/^#!/, "").trim().split(/\s+/);
  const node = words.indexOf("node");
  if (!first.startsWith("#!") || node === -1) throw new Error(`${cliFile}: first line is not a node shebang`);
  return words.slice(node + 1);
}
