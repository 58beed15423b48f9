/**
 * Where a real-pi e2e test runs pi, beside the scripted model: `agent/` (pi's settings, pointing at
 * the model, and chainpress's), `proj/` (pi's working folder) and the model's request log. `start`
 * runs pi there with chainpress's extension; `close` stops the model and removes the folders
 * (KEEP_E2E=1 keeps them). The test stops the pi it started.
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { piEnv, writeAgentDir } from "../../bench/lib/pi-agent-dir.js";
import type { PiBuild } from "../../bench/lib/pi-builds.js";
import { startPiRpc, type PiRpc } from "../../bench/lib/pi-rpc.js";
import { EXTENSION_ENTRY } from "./pi-build.js";
import { startMockLlm } from "./pi-mock-llm.mjs";

export interface PiWorkspace {
  work: string;
  agent: string;
  proj: string;
  mock: Awaited<ReturnType<typeof startMockLlm>>;
  /** pi in rpc mode, in `proj`, with chainpress's extension and `extra` arguments. */
  start(extra?: string[]): PiRpc;
  close(): Promise<void>;
}

export async function openPiWorkspace(options: { build: PiBuild; prefix: string; script: unknown; chainpress?: Record<string, unknown> }): Promise<PiWorkspace> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), options.prefix));
  const agent = path.join(work, "agent");
  const proj = path.join(work, "proj");
  const mock = await startMockLlm({ script: options.script, logFile: path.join(work, "requests.jsonl") });
  writeAgentDir(agent, mock.baseUrl, options.chainpress);
  fs.mkdirSync(proj, { recursive: true });
  return {
    work,
    agent,
    proj,
    mock,
    start: (extra = []) => startPiRpc({ build: options.build, cwd: proj, env: piEnv(agent, work), args: ["-e", EXTENSION_ENTRY, ...extra] }),
    close: async () => {
      await mock.close();
      if (!process.env.KEEP_E2E) fs.rmSync(work, { recursive: true, force: true });
    },
  };
}
