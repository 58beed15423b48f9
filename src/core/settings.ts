/**
 * The extension's settings: the `chainpress` key of `<agent dir>/settings.json`, merged deeply
 * over the defaults. Every leaf is type-checked on its own, so a partial nested object
 * (`"chainCompression": {"rollingWindow": 5}`) keeps the other defaults instead of silently
 * switching features off, which is what upstream's shallow merge does (reference §13.8).
 * Pure: settings-file.ts does the I/O.
 */

import {
  DEFAULT_PROTECTED_PATHS,
  DEFAULT_PROTECTED_TOOLS,
  DEFAULT_RECOVERY_GRACE_TURNS,
  DEFAULT_ROLLING_WINDOW,
  DEFAULT_SPILL_PREVIEW_BYTES,
  DEFAULT_SPILL_THRESHOLD,
} from "./defaults.js";
import { DEFAULT_ARCHIVE_MAP, type ArchiveMapSettings } from "./archive-map.js";
import { isObject } from "./entry-shapes.js";
import { DEFAULT_OPEN_CHAIN_SETTINGS, type OpenChainSettings } from "./open-chain-policy.js";
import { FLUSH_TRIGGERS, type FlushTrigger, type FlushTriggerName } from "./flush-trigger.js";

/** The key chainpress owns in pi's settings.json. */
export const SETTINGS_KEY = "chainpress";

export interface ChainCompressionSettings {
  /** Compress closed chains on the live flush, and render compressed chains. */
  enabled: boolean;
  /** Newest closed chains left alone by the live flush (`/pruner compact` uses 0). */
  rollingWindow: number;
  /** The closing assistant of a compressed chain loses its thinking blocks. */
  stripFinalAssistantThinking: boolean;
  /** When the live flush compresses (core/flush-trigger.ts). */
  trigger: FlushTriggerName;
  /** `when-it-pays`: the saved reads over this many later requests must exceed the rewrite. */
  paybackRequests: number;
  /** `when-it-pays`, `cold-cache`, `pressure`: compress anyway once the context reaches this percent of pi's compaction threshold. */
  pressurePercent: number;
  /** The provider's prompt-cache lifetime: a flush after this long without a request rewrites nothing that was still cached. */
  cacheTtlSeconds: number;
}

export interface ChainpressSettings {
  /** Master switch, toggled by `/pruner on|off`: off = no live flush and no rendering. */
  enabled: boolean;
  /** Show the one-line summary in pi's footer. */
  showStatusLine: boolean;
  /** Chains holding a context_tree_query result younger than this many user turns are deferred. */
  recoveryGraceTurns: number;
  /** Tool outputs never archived, by tool name. */
  protectedTools: string[];
  /** Tool outputs never archived, by the glob of their `path` argument. */
  protectedPaths: string[];
  /** Outputs of at least this many UTF-16 units are written to a spill file. */
  spillThreshold: number;
  /** UTF-8 bytes of a spilled output kept inline as its preview. */
  spillPreviewBytes: number;
  /** Worker threads of the compressor pool; 0 runs the compressor on pi's thread (default: defaultWorkersFor). */
  workers: number;
  chainCompression: ChainCompressionSettings;
  /** Archiving older outputs of the chain still running (issue 13; core/open-chain-policy.ts). */
  openChains: OpenChainSettings;
  /** The map of archived calls under each compressed chain (core/archive-map.ts). */
  archiveMap: ArchiveMapSettings;
}

export const DEFAULT_CHAIN_COMPRESSION: ChainCompressionSettings = {
  enabled: true,
  rollingWindow: DEFAULT_ROLLING_WINDOW,
  stripFinalAssistantThinking: true,
  trigger: "when-it-pays",
  paybackRequests: 20,
  pressurePercent: 80,
  cacheTtlSeconds: 300,
};

/** The flush trigger the settings name (core/flush-trigger.ts). */
export function flushTriggerOf(settings: ChainCompressionSettings): FlushTrigger {
  const pressureShare = settings.pressurePercent / 100;
  switch (settings.trigger) {
    case "each-reply":
      return { kind: "each-reply" };
    case "when-it-pays":
      return { kind: "when-it-pays", paybackRequests: settings.paybackRequests, pressureShare };
    case "cold-cache":
      return { kind: "cold-cache", pressureShare };
    case "pressure":
      return { kind: "pressure", pressureShare };
  }
}

export const DEFAULT_SETTINGS: ChainpressSettings = {
  enabled: true,
  showStatusLine: true,
  recoveryGraceTurns: DEFAULT_RECOVERY_GRACE_TURNS,
  protectedTools: [...DEFAULT_PROTECTED_TOOLS],
  protectedPaths: [...DEFAULT_PROTECTED_PATHS],
  spillThreshold: DEFAULT_SPILL_THRESHOLD,
  spillPreviewBytes: DEFAULT_SPILL_PREVIEW_BYTES,
  workers: 2,
  chainCompression: { ...DEFAULT_CHAIN_COMPRESSION },
  openChains: { ...DEFAULT_OPEN_CHAIN_SETTINGS },
  archiveMap: { ...DEFAULT_ARCHIVE_MAP },
};

/**
 * The extension's pool when the settings do not say: two workers, leaving pi's own thread (its
 * UI) a core: on 2 cores one worker halves pi's longest stall at the same speed (bench:pi).
 * `DEFAULT_SETTINGS.workers` is the most it gives.
 */
export function defaultWorkersFor(cores: number): number {
  return Math.max(0, Math.min(DEFAULT_SETTINGS.workers, cores - 1));
}

/** DEFAULT_SETTINGS for a machine with this many cores. */
export function defaultSettingsFor(cores: number): ChainpressSettings {
  return { ...structuredClone(DEFAULT_SETTINGS), workers: defaultWorkersFor(cores) };
}

export interface MergeResult {
  settings: ChainpressSettings;
  /** One line per ignored value: unknown key, wrong type or out of range. */
  warnings: string[];
}

/** Smallest accepted value of each numeric leaf; numbers are floored (they count things). */
const NUMBER_MINIMUM: Record<string, number> = {
  recoveryGraceTurns: 0,
  spillThreshold: 1,
  spillPreviewBytes: 0,
  workers: 0,
  "chainCompression.rollingWindow": 0,
  "chainCompression.paybackRequests": 0,
  "chainCompression.pressurePercent": 1,
  "chainCompression.cacheTtlSeconds": 1,
  "openChains.triggerTokens": 0,
  "openChains.keepRecent": 0,
  "openChains.minReclaimTokens": 0,
  "archiveMap.maxCharsPerChain": 0,
  "archiveMap.maxCharsTotal": 0,
};

/**
 * The raw `chainpress` value pi's SettingsManager hands an extension: the project's
 * `.pi/settings.json` over the global one, merged as pi merges settings: when both are objects
 * their keys are combined one level deep (a project `chainCompression` object replaces the
 * global one whole), otherwise the project value wins when present.
 */
export function layerSettings(globalRaw: unknown, projectRaw: unknown): unknown {
  if (projectRaw === undefined) return globalRaw;
  if (isObject(globalRaw) && isObject(projectRaw)) return { ...globalRaw, ...projectRaw };
  return projectRaw;
}

/** Merge the raw `chainpress` value over the defaults; anything unusable keeps its default. */
export function mergeSettings(raw: unknown, defaults: ChainpressSettings = DEFAULT_SETTINGS): MergeResult {
  const warnings: string[] = [];
  const settings = structuredClone(defaults);
  if (raw !== undefined) mergeObject(settings as unknown as Record<string, unknown>, raw, SETTINGS_KEY, warnings);
  return { settings, warnings };
}

function mergeObject(target: Record<string, unknown>, raw: unknown, path: string, warnings: string[]): void {
  if (!isObject(raw)) {
    warnings.push(`${path}: expected an object, got ${describe(raw)}; defaults kept`);
    return;
  }
  for (const [key, value] of Object.entries(raw)) {
    const keyPath = `${path}.${key}`;
    if (!(key in target)) warnings.push(`${keyPath}: unknown setting ignored`);
    else if (isObject(target[key])) mergeObject(target[key] as Record<string, unknown>, value, keyPath, warnings);
    else {
      const checked = checkLeaf(target[key], value, keyPath.slice(SETTINGS_KEY.length + 1));
      if (checked.ok) target[key] = checked.value;
      else warnings.push(`${keyPath}: ${checked.problem}; default ${JSON.stringify(target[key])} kept`);
    }
  }
}

/** String leaves that name one of a fixed set. */
const CHOICES: Record<string, readonly string[]> = {
  "chainCompression.trigger": FLUSH_TRIGGERS,
};

type LeafCheck = { ok: true; value: unknown } | { ok: false; problem: string };

/** A leaf must have its default's type; string lists must hold strings only. */
function checkLeaf(fallback: unknown, value: unknown, path: string): LeafCheck {
  if (Array.isArray(fallback)) {
    const ok = Array.isArray(value) && value.every((item) => typeof item === "string");
    return ok ? { ok, value: [...value] } : { ok: false, problem: `expected a list of strings, got ${describe(value)}` };
  }
  const choices = CHOICES[path];
  if (choices !== undefined) {
    return typeof value === "string" && choices.includes(value) ? { ok: true, value } : { ok: false, problem: `expected one of ${choices.join(", ")}, got ${describe(value)}` };
  }
  if (typeof fallback === "number") {
    if (typeof value !== "number" || !Number.isFinite(value)) return { ok: false, problem: `expected a number, got ${describe(value)}` };
    const minimum = NUMBER_MINIMUM[path] ?? 0;
    const floored = Math.floor(value);
    return floored >= minimum ? { ok: true, value: floored } : { ok: false, problem: `expected at least ${minimum}, got ${value}` };
  }
  return typeof value === typeof fallback ? { ok: true, value } : { ok: false, problem: `expected a ${typeof fallback}, got ${describe(value)}` };
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  return typeof value === "string" ? `the string ${JSON.stringify(value)}` : `a ${typeof value}`;
}
