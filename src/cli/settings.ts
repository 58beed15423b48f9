/**
 * The CLI reads the settings the pi extension reads: the `chainpress` key of
 * `<agent dir>/settings.json` (`$PI_CODING_AGENT_DIR` or `~/.pi/agent`) with the current
 * folder's `.pi/settings.json` over it, merged as pi merges them. Flags override them. Without
 * this, `chainpress compact` archived outputs the user had protected in settings.json.
 */

import type { ChainpressSettings } from "../core/settings.js";
import { loadSettings, resolveAgentDir, type LoadedSettings } from "../io/settings-file.js";
import { writeErr, type CliIo } from "./output.js";

/** Settings for this run; their warnings (unknown keys, bad JSON) go to stderr. */
export function loadCliSettings(io: CliIo, cwd = process.cwd()): LoadedSettings {
  const loaded = loadSettings(resolveAgentDir(io.env), cwd);
  for (const warning of loaded.warnings) writeErr(io, `chainpress: warning: settings: ${warning}`);
  return loaded;
}

/** One line naming the settings file(s) used, or saying that none held `chainpress` settings. */
export function settingsLine(loaded: LoadedSettings): string {
  if (loaded.files.length > 0) return `settings: ${loaded.files.join(" + ")}`;
  return `settings: defaults (no "chainpress" key in ${loaded.checked.join(" or ")})`;
}

/** What the JSON reports say about the settings. */
export function settingsJson(loaded: LoadedSettings): { files: string[]; checked: string[]; values: ChainpressSettings } {
  return { files: loaded.files, checked: loaded.checked, values: loaded.settings };
}
