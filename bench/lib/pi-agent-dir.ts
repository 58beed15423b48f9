/**
 * A throw-away pi agent folder pointing at the mock model: `models.json` (provider "mock",
 * openai-completions on loopback) and `settings.json` (mock as default, retries off, plus an
 * optional `chainpress` section). Mirrors what shared/reference/pi-harness/setup-agent-dir.sh writes.
 */

import fs from "node:fs";
import path from "node:path";

/** `modelInput`: what the mock model accepts; with "image", pi sends tool results' images to it. */
export function writeAgentDir(agentDir: string, baseUrl: string, chainpress?: Record<string, unknown>, modelInput: Array<"text" | "image"> = ["text"]): void {
  fs.mkdirSync(agentDir, { recursive: true });
  const models = {
    providers: {
      mock: {
        baseUrl,
        api: "openai-completions",
        apiKey: "mock-key",
        compat: { supportsDeveloperRole: false, supportsReasoningEffort: false },
        models: [
          {
            id: "mock-model",
            name: "Mock Model",
            reasoning: false,
            input: modelInput,
            contextWindow: 1_000_000,
            maxTokens: 4096,
            cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
          },
        ],
      },
    },
  };
  const settings: Record<string, unknown> = {
    defaultProvider: "mock",
    defaultModel: "mock-model",
    quietStartup: true,
    enableInstallTelemetry: false,
    retry: { enabled: false },
    // Keep pi's own compaction out of the way: the test is about chainpress's.
    compaction: { enabled: false },
  };
  settings.chainpress = withFlushEachReply(chainpress);
  fs.writeFileSync(path.join(agentDir, "models.json"), JSON.stringify(models, null, 2));
  fs.writeFileSync(path.join(agentDir, "settings.json"), JSON.stringify(settings, null, 2));
}

/**
 * The flush as it was before issue 47 chose its policy: at each reply's end, the newest three
 * chains kept. Tests and benches of the flush's mechanics run under it, so that a small scripted
 * chain is compressed when they look; a run's own `chainCompression` keys win.
 */
export const FLUSH_EACH_REPLY = { trigger: "each-reply", rollingWindow: 3 } as const;

export function withFlushEachReply(chainpress: Record<string, unknown> = {}): Record<string, unknown> {
  const own = chainpress.chainCompression as Record<string, unknown> | undefined;
  return { ...chainpress, chainCompression: { ...FLUSH_EACH_REPLY, ...own } };
}

/** Environment for a pi child process: offline, this agent folder, no user config leaking in. */
export function piEnv(agentDir: string, home: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: home,
    PI_CODING_AGENT_DIR: agentDir,
    PI_OFFLINE: "1",
    TERM: "dumb",
    NO_COLOR: "1",
  };
}
