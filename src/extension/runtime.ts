/**
 * What the extension's handlers share: pi's API, the settings, the pruning state, the worker
 * pool, the serial work queue and the persistence gate. One instance per extension load (pi
 * reloads extensions on /reload and session switches, so nothing here outlives a session).
 */

import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { makeProtectionPredicate, type ProtectionPredicate } from "../core/protection.js";
import type { LiveSessionLock } from "../io/live-session-lock.js";
import type { AppendEntry } from "../main/append-entry.js";
import type { LoadFigures } from "../main/load-monitor.js";
import { endSlice, ownTurn, pauseIfDue } from "../main/cooperative.js";
import type { MessageChars } from "../main/message-chars.js";
import type { LastRequest } from "./flush-timing.js";
import { PersistGate } from "./persist-gate.js";
import { LazyRunner, type RunnerFactory } from "./lazy-runner.js";
import { SerialQueue } from "./serial-queue.js";
import type { ChainpressSettings, MergeResult } from "../core/settings.js";
import { DEFAULT_SETTINGS } from "../core/settings.js";
import { machineDefaultSettings } from "../io/settings-file.js";
import { StateHolder } from "./state-holder.js";

export interface Chainpress {
  readonly pi: ExtensionAPI;
  /** Folder of pi's settings.json. */
  readonly agentDir: string;
  settings: ChainpressSettings;
  /** Problems found in the `chainpress` settings, shown by `/pruner status`. */
  settingsWarnings: string[];
  /** The protection rule compiled from the settings. */
  isProtected: ProtectionPredicate;
  readonly holder: StateHolder;
  readonly runner: LazyRunner;
  readonly queue: SerialQueue;
  readonly gate: PersistGate;
  /** How long a `/pruner` command waits for its turn before saying why it cannot run. */
  readonly commandWaitMs: number;
  /** The live-session lock of the open session file (none for an in-memory session). */
  liveLock: LiveSessionLock | undefined;
  /** What the last `/pruner compact` cost pi's process (shown by `/pruner status`). */
  lastCompact: CompactCost | undefined;
  /** An open-chain step is queued and not started (extension/open-chain-step.ts): a burst of turns needs only one. */
  openChainQueued: boolean;
  /** The latest open-chain step scheduled, until it ends: the next request waits for it (extension/open-chain-step.ts). */
  openChainStep: Promise<void> | undefined;
  /** How long a request waits for that step at most (OPEN_CHAIN_WAIT_MS). */
  readonly openChainWaitMs: number;
  /**
   * JSON length per message object, for `/pruner status` (extension/status.ts): pi keeps its
   * message objects, and rendering returns untouched ones as they are, so after the first report
   * only what a compaction changed is serialised again.
   */
  readonly messageLengths: WeakMap<object, number>;
  /** Billed characters per message object, for the flush's decision (extension/flush-timing.ts). */
  readonly messageChars: MessageChars;
  /** The last request that went out (extension/flush-timing.ts). */
  lastRequest: LastRequest | undefined;
  /** The deferred flush's timer, until it fires or a request goes out. */
  coldFlushTimer: NodeJS.Timeout | undefined;
}

/** One `/pruner compact`: what it cost pi's event loop while it ran. */
export interface CompactCost extends LoadFigures {
  wallMs: number;
  chains: number;
  /** Of the chains a worker ran, those it read from the session file (the others pi's thread encoded). */
  chainsFromFile: number;
}

/**
 * Default of `openChainWaitMs`. A step takes a fraction of a second, a few seconds on a machine
 * busy with other work; a model call takes seconds. Five seconds lets a step finish on a loaded
 * machine, so the bound on the largest request holds, and costs one request at most that long
 * where a step is stuck (then the request goes out as it is, and the stubs follow in the next).
 */
export const OPEN_CHAIN_WAIT_MS = 5_000;

/** Default of `commandWaitMs`: long enough for a flush that is about to end, short enough to feel like an answer. */
export const DEFAULT_COMMAND_WAIT_MS = 3_000;

export interface ChainpressOptions {
  agentDir: string;
  /** Test seam: how the worker pool is made (default: createChainRunner). */
  createRunner?: RunnerFactory;
  /** Test seam: how long a flush waits for pi to persist its closing reply (default 60 s). */
  persistTimeoutMs?: number;
  /** Test seam: see Chainpress.commandWaitMs. */
  commandWaitMs?: number;
  /** Test seam: see Chainpress.openChainWaitMs. */
  openChainWaitMs?: number;
}

export function createRuntime(pi: ExtensionAPI, options: ChainpressOptions): Chainpress {
  const runtime: Chainpress = {
    pi,
    agentDir: options.agentDir,
    settings: machineDefaultSettings(),
    settingsWarnings: [],
    isProtected: makeProtectionPredicate(DEFAULT_SETTINGS),
    holder: new StateHolder(appendNow(pi)),
    runner: new LazyRunner(() => runtime.settings.workers, options.createRunner),
    queue: new SerialQueue(),
    gate: new PersistGate(options.persistTimeoutMs),
    commandWaitMs: options.commandWaitMs ?? DEFAULT_COMMAND_WAIT_MS,
    liveLock: undefined,
    lastCompact: undefined,
    openChainQueued: false,
    openChainStep: undefined,
    openChainWaitMs: options.openChainWaitMs ?? OPEN_CHAIN_WAIT_MS,
    messageLengths: new WeakMap(),
    messageChars: new WeakMap(),
    lastRequest: undefined,
    coldFlushTimer: undefined,
  };
  return runtime;
}

export function applySettings(runtime: Chainpress, merged: MergeResult): void {
  runtime.settings = merged.settings;
  runtime.settingsWarnings = merged.warnings;
  runtime.isProtected = makeProtectionPredicate(merged.settings);
}

/**
 * pi.appendEntry as an AppendEntry: pi writes synchronously (appendFileSync) and throws on failure,
 * so a resolved promise means the entry is in the file. Each append has a turn of the event loop to
 * itself (main/cooperative.ts): pi serialises and writes a chain's index entry in one piece, and
 * whatever shared its turn (a worker's result arriving, the commit's steps, a slice of a chain's
 * encoding) made pi's longest stalls. `check` runs in that turn, just before the write.
 */
export function appendNow(pi: ExtensionAPI, check?: () => void): AppendEntry {
  return async (customType, data) => {
    await ownTurn();
    check?.();
    try {
      pi.appendEntry(customType, data);
    } finally {
      endSlice();
    }
    await pauseIfDue();
  };
}

/**
 * appendNow that refuses to write once the branch was rebuilt (tree navigation, session switch)
 * after `generation`: pi appends at the current leaf, which would then be on another branch.
 */
export function branchBoundAppend(runtime: Chainpress, generation: number): AppendEntry {
  return appendNow(runtime.pi, () => {
    if (runtime.holder.generation !== generation) throw new Error("the session branch changed during the pass");
  });
}
