/**
 * Reading and writing the `chainpress` key of `<agent dir>/settings.json` (and reading the
 * project's `.pi/settings.json` over it, as pi does; the CLI reads the same two files). pi writes the same
 * file (model changes and more) under a `proper-lockfile` lock, re-reading it and changing only
 * the fields it modified; we take the same lock (a `settings.json.lock` folder) and likewise
 * change only `chainpress.enabled`, so neither writer loses the other's keys.
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { defaultSettingsFor, layerSettings, mergeSettings, SETTINGS_KEY, type ChainpressSettings, type MergeResult } from "../core/settings.js";

/** The defaults on this machine (the pool's size depends on its cores). */
export function machineDefaultSettings(): ChainpressSettings {
  return defaultSettingsFor(os.availableParallelism());
}

/** pi's agent folder: `$PI_CODING_AGENT_DIR` (with `~` expanded) or `~/.pi/agent`, as pi resolves it. */
export function resolveAgentDir(env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env.PI_CODING_AGENT_DIR;
  if (!fromEnv) return path.join(os.homedir(), ".pi", "agent");
  if (fromEnv === "~") return os.homedir();
  return fromEnv.startsWith("~/") ? path.join(os.homedir(), fromEnv.slice(2)) : fromEnv;
}

export function settingsPath(agentDir: string): string {
  return path.join(agentDir, "settings.json");
}

/** A project's settings file, where pi looks for it: `<cwd>/.pi/settings.json`. */
export function projectSettingsPath(cwd: string): string {
  return path.join(cwd, ".pi", "settings.json");
}

export interface LoadedSettings extends MergeResult {
  /** Settings files that hold a `chainpress` section, global first: the ones that were used. */
  files: string[];
  /** Every file looked at, used or not (for "no settings found in …"). */
  checked: string[];
}

/** The `chainpress` value of one settings file; a missing file has none, a broken one a warning. */
function readSection(file: string): { raw: unknown; warning?: string } {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { raw: undefined };
    return { raw: undefined, warning: `cannot read ${file}: ${(error as Error).message}` };
  }
  try {
    const parsed: unknown = JSON.parse(text);
    return { raw: typeof parsed === "object" && parsed !== null ? (parsed as Record<string, unknown>)[SETTINGS_KEY] : undefined };
  } catch (error) {
    return { raw: undefined, warning: `${file} is not valid JSON: ${(error as Error).message}` };
  }
}

/**
 * Load and merge the global settings and, given a project folder, its `.pi/settings.json` over
 * them; a missing file means defaults, a broken one means defaults plus a warning.
 */
export function loadSettings(agentDir: string, cwd?: string): LoadedSettings {
  const checked = [settingsPath(agentDir), ...(cwd === undefined ? [] : [projectSettingsPath(cwd)])];
  const sections = checked.map((file) => ({ file, ...readSection(file) }));
  const merged = mergeSettings(layerSettings(sections[0]!.raw, sections[1]?.raw), machineDefaultSettings());
  return {
    settings: merged.settings,
    warnings: [...sections.flatMap((s) => (s.warning === undefined ? [] : [s.warning])), ...merged.warnings],
    files: sections.filter((s) => s.raw !== undefined).map((s) => s.file),
    checked,
  };
}

/** Persist `/pruner on|off` as `chainpress.enabled`, leaving every other key as it is on disk. */
export async function persistEnabled(agentDir: string, enabled: boolean): Promise<string> {
  const file = settingsPath(agentDir);
  fs.mkdirSync(agentDir, { recursive: true });
  await withSettingsLock(file, () => {
    const current = readJsonObject(file);
    const section = current[SETTINGS_KEY];
    const own = typeof section === "object" && section !== null && !Array.isArray(section) ? section : {};
    current[SETTINGS_KEY] = { ...own, enabled };
    writeAtomically(file, `${JSON.stringify(current, null, 2)}\n`);
  });
  return file;
}

function readJsonObject(file: string): Record<string, unknown> {
  if (!fs.existsSync(file)) return {};
  const parsed: unknown = JSON.parse(fs.readFileSync(file, "utf8"));
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new Error(`${file} does not hold a JSON object`);
  return parsed as Record<string, unknown>;
}

/** Temp file + rename: pi reading the file concurrently sees the old or the new text, never half. */
function writeAtomically(file: string, text: string): void {
  const temp = `${file}.chainpress-${process.pid}-${randomBytes(4).toString("hex")}.tmp`;
  fs.writeFileSync(temp, text, "utf8");
  fs.renameSync(temp, file);
}

/** A lock older than this is left over from a dead process (proper-lockfile's default). */
const STALE_LOCK_MS = 10_000;
const LOCK_ATTEMPTS = 50;
const LOCK_RETRY_MS = 20;

async function withSettingsLock(file: string, work: () => void): Promise<void> {
  const lock = `${file}.lock`;
  await acquireLock(lock);
  try {
    work();
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}

async function acquireLock(lock: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      fs.mkdirSync(lock);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      if (isStale(lock)) fs.rmSync(lock, { recursive: true, force: true });
      else if (attempt >= LOCK_ATTEMPTS) throw new Error(`settings file is locked by another process: ${lock}`);
      else await new Promise((resolve) => setTimeout(resolve, LOCK_RETRY_MS));
    }
  }
}

function isStale(lock: string): boolean {
  try {
    return Date.now() - fs.statSync(lock).mtimeMs > STALE_LOCK_MS;
  } catch {
    return false;
  }
}
