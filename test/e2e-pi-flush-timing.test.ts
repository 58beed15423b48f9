/**
 * The live flush's timing (issue 47) end to end on the REAL pi (rpc mode, offline), once per
 * supported build, with chainpress loaded from dist/: under `when-it-pays` with a horizon of 0
 * requests, a closed chain past the window is not compressed while the prompt cache is warm; once
 * the cache lifetime (1 s here) passes with no request, chainpress's timer compresses it inside
 * pi's process, between two prompts, and the next request carries the compressed chain.
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { piEnv, writeAgentDir } from "../bench/lib/pi-agent-dir.js";
import { piBuild, PI_VERSIONS } from "../bench/lib/pi-builds.js";
import { startPiRpc, type PiRpc } from "../bench/lib/pi-rpc.js";
import { EXTENSION_ENTRY, ensureBuilt } from "./helpers/pi-build.js";
import { sessionEntries } from "./helpers/pi-run-end.js";
import { lastUserTurn, startMockLlm } from "./helpers/pi-mock-llm.mjs";

type Step = { text?: string; toolCalls?: Array<{ name: string; arguments: Record<string, unknown> }> };
type LoggedRequest = { n: number; request: { messages: Array<{ role: string; content: unknown }> }; step: Step; error?: string };

/** Each prompt "read fN" reads that file, then answers. */
function script(request: { messages: Array<{ role: string; content: unknown }> }): Step {
  const { text, step } = lastUserTurn(request.messages);
  const file = /^read (f\d)$/.exec(text)?.[1];
  if (file === undefined) throw new Error(`no scenario for ${JSON.stringify(text)}`);
  return step === 0 ? { toolCalls: [{ name: "read", arguments: { path: `${file}.txt` } }] } : { text: `${file} read` };
}

const SETTINGS = { chainCompression: { trigger: "when-it-pays", paybackRequests: 0, cacheTtlSeconds: 1, rollingWindow: 1 } };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(PI_VERSIONS)("the live flush waits for the cache to expire on a real pi %s", (version) => {
  let work: string;
  let mock: Awaited<ReturnType<typeof startMockLlm>>;
  let pi: PiRpc | undefined;
  let sessionFile: string;
  /** Chain entries in the session file after the second prompt, then after the cache expired. */
  let warm: number;
  let cold: number;
  const requests = () => mock.requests as LoggedRequest[];
  const chainEntries = () => sessionEntries(sessionFile).filter((e) => e.type === "custom" && e.customType === "context-prune-chain").length;

  beforeAll(async () => {
    ensureBuilt();
    work = fs.mkdtempSync(path.join(os.tmpdir(), "chainpress-e2e-timing-"));
    mock = await startMockLlm({ script, logFile: path.join(work, "requests.jsonl"), delayMs: 0 });
    writeAgentDir(path.join(work, "agent"), mock.baseUrl, SETTINGS);
    const proj = path.join(work, "proj");
    fs.mkdirSync(proj);
    for (const name of ["f1", "f2", "f3"]) fs.writeFileSync(path.join(proj, `${name}.txt`), `${name.toUpperCase()} `.repeat(3000));
    pi = startPiRpc({ build: piBuild(version), cwd: proj, env: piEnv(path.join(work, "agent"), work), args: ["-e", EXTENSION_ENTRY] });
    await pi.prompt("read f1");
    await pi.prompt("read f2");
    sessionFile = ((await pi.send({ type: "get_state" })).data as { sessionFile: string }).sessionFile;
    await sleep(200);
    warm = chainEntries();
    await sleep(2000);
    cold = chainEntries();
    await pi.prompt("read f3");
    const problems = pi.events.filter((e) => e.type === "extension_error" || (e.type === "extension_ui_request" && e.notifyType !== undefined && e.notifyType !== "info"));
    expect(problems).toEqual([]);
    expect(await pi.close()).toBe(0);
    pi = undefined;
  }, 90_000);

  afterAll(async () => {
    await pi?.close(5_000);
    await mock?.close();
    if (work && !process.env.KEEP_E2E) fs.rmSync(work, { recursive: true, force: true });
  });

  it("leaves the first chain whole while the cache is warm, and compresses it once the cache has expired", () => {
    expect(requests().filter((r) => r.error)).toEqual([]);
    expect(warm).toBe(0);
    expect(cold).toBe(1);
  });

  it("the next request carries the compressed chain instead of f1's output", () => {
    const third = requests().find((r) => JSON.stringify(r.request.messages).includes("read f3"))!;
    const sent = JSON.stringify(third.request.messages);
    expect(sent).toContain("<compressed-chain id=\\\"b1\\\"");
    expect(sent).not.toContain("F1 F1 F1");
    expect(sent).toContain("F2 F2 F2");
  });
});
