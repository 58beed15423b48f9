/**
 * The `chainpress` settings: deep merge over the defaults (a partial nested object keeps the
 * other defaults, unlike upstream's shallow merge, reference §13.8), per-leaf type checks, and
 * `/pruner on|off` persisted without disturbing pi's own keys.
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { afterEach, describe, expect, it } from "vitest";
import { loadSettings, persistEnabled, resolveAgentDir } from "../src/io/settings-file.js";
import { DEFAULT_CHAIN_COMPRESSION, DEFAULT_SETTINGS, defaultSettingsFor, defaultWorkersFor, mergeSettings } from "../src/core/settings.js";
import { PiHost } from "./helpers/pi-host.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});
function agentDirWith(settings: unknown): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "chainpress-settings-"));
  dirs.push(dir);
  if (settings !== undefined) fs.writeFileSync(path.join(dir, "settings.json"), typeof settings === "string" ? settings : JSON.stringify(settings, null, 2));
  return dir;
}

describe("mergeSettings", () => {
  it("keeps the other nested defaults when only rollingWindow is given (upstream drops `enabled`)", () => {
    const { settings, warnings } = mergeSettings({ chainCompression: { rollingWindow: 5 } });
    expect(settings.chainCompression).toEqual({ ...DEFAULT_CHAIN_COMPRESSION, enabled: true, rollingWindow: 5, stripFinalAssistantThinking: true });
    expect(settings.spillThreshold).toBe(65536);
    expect(warnings).toEqual([]);
  });

  it("sizes the default pool by the machine: two workers at most, one core left for pi's thread", () => {
    expect([1, 2, 3, 4, 16].map(defaultWorkersFor)).toEqual([0, 1, 2, 2, 2]);
    expect(defaultSettingsFor(2)).toEqual({ ...DEFAULT_SETTINGS, workers: 1 });
    expect(mergeSettings({ spillThreshold: 10 }, defaultSettingsFor(2)).settings.workers).toBe(1);
    expect(mergeSettings({ workers: 4 }, defaultSettingsFor(2)).settings.workers).toBe(4);
  });

  it("returns the defaults for a missing section, without sharing their arrays", () => {
    const { settings } = mergeSettings(undefined);
    expect(settings).toEqual(DEFAULT_SETTINGS);
    settings.protectedPaths.push("x");
    expect(DEFAULT_SETTINGS.protectedPaths).toEqual(["**/skills/**/*.md"]);
  });

  it("type-checks every leaf and keeps the default of a bad one, saying why", () => {
    const { settings, warnings } = mergeSettings({
      chainCompression: { rollingWindow: "5", enabled: false },
      spillThreshold: 0,
      workers: 2.7,
      protectedTools: ["todowrite", 3],
      showStatusLine: "yes",
      colour: "blue",
    });
    expect(settings.chainCompression).toEqual({ ...DEFAULT_CHAIN_COMPRESSION, enabled: false, rollingWindow: 1, stripFinalAssistantThinking: true });
    expect(settings.spillThreshold).toBe(65536);
    expect(settings.workers).toBe(2);
    expect(settings.protectedTools).toEqual([]);
    expect(settings.showStatusLine).toBe(true);
    expect(warnings).toEqual([
      'chainpress.chainCompression.rollingWindow: expected a number, got the string "5"; default 1 kept',
      "chainpress.spillThreshold: expected at least 1, got 0; default 65536 kept",
      "chainpress.protectedTools: expected a list of strings, got a list; default [] kept",
      'chainpress.showStatusLine: expected a boolean, got the string "yes"; default true kept',
      "chainpress.colour: unknown setting ignored",
    ]);
  });

  it("rejects a non-object section or nested object", () => {
    expect(mergeSettings(true).warnings).toEqual(["chainpress: expected an object, got a boolean; defaults kept"]);
    const nested = mergeSettings({ chainCompression: [1] });
    expect(nested.settings.chainCompression).toEqual(DEFAULT_SETTINGS.chainCompression);
    expect(nested.warnings).toEqual(["chainpress.chainCompression: expected an object, got a list; defaults kept"]);
  });
});

describe("settings file", () => {
  it("reads the chainpress key of <agent dir>/settings.json", () => {
    const dir = agentDirWith({ defaultModel: "m", chainpress: { recoveryGraceTurns: 1 } });
    expect(loadSettings(dir).settings.recoveryGraceTurns).toBe(1);
    expect(loadSettings(agentDirWith(undefined))).toMatchObject({ settings: defaultSettingsFor(os.availableParallelism()), warnings: [], files: [] });
    expect(loadSettings(agentDirWith("{ not json")).warnings[0]).toMatch(/settings\.json is not valid JSON/);
  });

  it("persists on/off under chainpress.enabled and leaves every other key alone", async () => {
    const dir = agentDirWith({ defaultModel: "m", retry: { enabled: false }, chainpress: { workers: 1 } });
    await persistEnabled(dir, false);
    const written = JSON.parse(fs.readFileSync(path.join(dir, "settings.json"), "utf8"));
    expect(written).toEqual({ defaultModel: "m", retry: { enabled: false }, chainpress: { workers: 1, enabled: false } });
    expect(loadSettings(dir).settings.enabled).toBe(false);
    expect(fs.existsSync(path.join(dir, "settings.json.lock"))).toBe(false);
  });

  it("waits for pi's settings lock, and breaks a stale one", async () => {
    const dir = agentDirWith({});
    const lock = path.join(dir, "settings.json.lock");
    fs.mkdirSync(lock);
    setTimeout(() => fs.rmdirSync(lock), 60);
    await persistEnabled(dir, false);
    expect(loadSettings(dir).settings.enabled).toBe(false);
    fs.mkdirSync(lock);
    const old = new Date(Date.now() - 60_000);
    fs.utimesSync(lock, old, old);
    await persistEnabled(dir, true);
    expect(loadSettings(dir).settings.enabled).toBe(true);
  });

  it("finds the agent dir the way pi does", () => {
    expect(resolveAgentDir({ PI_CODING_AGENT_DIR: "/x/agent" })).toBe("/x/agent");
    expect(resolveAgentDir({ PI_CODING_AGENT_DIR: "~/a" })).toBe(path.join(os.homedir(), "a"));
    expect(resolveAgentDir({})).toBe(path.join(os.homedir(), ".pi", "agent"));
  });
});

describe("/pruner on|off", () => {
  it("survives a restart of the extension", async () => {
    const dir = agentDirWith({ chainpress: { workers: 0 } });
    const host = await PiHost.start(SessionManager.inMemory(), dir);
    await host.command("/pruner off");
    expect(host.notices.at(-1)!.message).toBe(`pruner: off (saved in ${path.join(dir, "settings.json")})`);
    expect(host.statuses.get("chainpress")).toBe("\u2502 chainpress off");
    const restarted = await PiHost.start(SessionManager.inMemory(), dir);
    expect(restarted.runtime.settings.enabled).toBe(false);
    await restarted.command("/pruner on");
    expect((await PiHost.start(SessionManager.inMemory(), dir)).runtime.settings.enabled).toBe(true);
  });

  it("shows settings problems at session start", async () => {
    const host = await PiHost.start(SessionManager.inMemory(), agentDirWith({ chainpress: { workers: -1 } }));
    const workers = defaultWorkersFor(os.availableParallelism());
    expect(host.notices).toEqual([{ message: `pruner: settings: chainpress.workers: expected at least 0, got -1; default ${workers} kept`, level: "warning" }]);
    expect(host.runtime.settings.workers).toBe(workers);
  });
});
