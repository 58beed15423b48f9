/**
 * The end of a scripted run of a real pi (bench/lib/pi-rpc.ts): what every end-to-end test asks
 * of it before looking at what it wrote.
 */

import fs from "node:fs";
import { expect } from "vitest";
import type { PiRpc } from "../../bench/lib/pi-rpc.js";

/** No extension error nor warning, a clean exit, and no request the mock's script could not answer. */
export async function closeCleanly(pi: PiRpc, requests: ReadonlyArray<{ error?: string }>): Promise<void> {
  const problems = pi.events.filter((e) => e.type === "extension_error" || (e.type === "extension_ui_request" && e.notifyType !== undefined && e.notifyType !== "info"));
  expect(problems).toEqual([]);
  expect(await pi.close()).toBe(0);
  expect(requests.filter((r) => r.error)).toEqual([]);
}

/** Every entry of a session file, parsed. */
export function sessionEntries<T = Record<string, any>>(file: string): T[] {
  return fs.readFileSync(file, "utf8").trim().split("\n").map((line) => JSON.parse(line) as T);
}
