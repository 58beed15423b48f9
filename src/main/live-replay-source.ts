/**
 * The "chainpress live" replay policy (issue 47): for each recorded request, the context the
 * extension would have sent had it run from the session's first entry with the given settings.
 * Walking the branch, it keeps pi's context (contextMessages, as recording.ts builds it) and the
 * branch's messages (what the flush detects on); after each reply that closes a chain it runs the
 * flush, and before each request that follows a tool turn the open-chain step
 * (live-replay-state.ts); each request's context is the extension's render
 * (core/render/prune-messages.ts) of pi's context over that state, as the provider is sent it.
 * pi's compactions and context edits stay where the recording has them: the context restarts
 * there as pi's did (with chainpress some would not have happened; that is not modelled).
 * A flush and a step are taken to finish before the next request, as they do when pi waits for
 * them (live, the next request may leave first: issue 47 item 5).
 * Incremental: while the state is unchanged and pi's context only grew, the step appends the new
 * messages (they hold no archived output and no compressed chain); a full render happens only
 * after something was archived or compressed, or where pi's context restarted.
 * In main/ with the state it advances (live-replay-state.ts says why); no I/O.
 */

import { editedOutputs, editsOnBranch, type ContextEdits, type EditedOutput } from "../core/context-edits.js";
import { mapBudgetOf } from "../core/archive-map.js";
import { makeProtectionPredicate } from "../core/protection.js";
import { PruneState } from "../core/prune-state.js";
import { pruneMessages, type PruneOptions } from "../core/render/prune-messages.js";
import type { ContextSource, ContextStep } from "../core/replay/policy.js";
import { sentMessages, type Recording } from "../core/replay/recording.js";
import { branchMessagesSteps, contextMessagesSteps } from "../core/session-tree.js";
import { DEFAULT_SETTINGS, type ChainpressSettings } from "../core/settings.js";
import type { AgentMessage, SessionEntry } from "../core/session-types.js";
import { runSteps } from "../core/steps.js";
import { DetectedChains, flushesAfter, simulateFlush, simulateOpenStep, type LiveSettings } from "./live-replay-state.js";

export const LIVE_POLICY_NAME = "chainpress live";

export interface LiveOptions {
  /** Render pi's whole context at every request instead of appending where nothing changed: the check of the incremental steps (linear per request). */
  renderEveryRequest?: boolean;
}

/** The live policy under `settings` (default: the extension's defaults). */
export function chainpressLive(settings: ChainpressSettings = DEFAULT_SETTINGS, options: LiveOptions = {}): ContextSource {
  const live: LiveSettings = { settings, isProtected: makeProtectionPredicate(settings) };
  return { name: LIVE_POLICY_NAME, steps: (recording) => liveSteps(recording, live, options.renderEveryRequest === true) };
}

/** The render options the extension's context handler uses (extension/context-handler.ts `pruneOptions`). */
function renderOptions(live: LiveSettings): PruneOptions {
  const { settings } = live;
  return {
    isProtected: live.isProtected,
    recoveryGraceTurns: settings.recoveryGraceTurns,
    chainCompressionEnabled: settings.chainCompression.enabled,
    stripFinalAssistantThinking: settings.chainCompression.stripFinalAssistantThinking,
    map: mapBudgetOf(settings.archiveMap) ?? false,
  };
}

function* liveSteps(recording: Recording, live: LiveSettings, renderEveryRequest: boolean): Generator<ContextStep> {
  const { branch, requests } = recording;
  const options = renderOptions(live);
  const state = new PruneState();
  const pi = new PiView(branch);
  /** The context last given (as sent), and what it was rendered from. */
  let sent: AgentMessage[] = [];
  let renderedFrom = 0;
  let stale = true;
  let chains = 0;
  let entry = 0;
  for (const request of requests) {
    for (; entry < request.entryIndex; entry++) {
      const message = pi.add(entry);
      if (message !== undefined && flushesAfter(message)) {
        // The flush runs as the reply ends: its chain entries' compressedAt (the rendered chain message's timestamp).
        const at = typeof message.timestamp === "number" ? message.timestamp : request.time;
        const compressed = simulateFlush(pi.branchMessages, state, live, at, pi.chains);
        chains += compressed;
        if (compressed > 0) stale = true;
      }
    }
    const last = pi.branchMessages[pi.branchMessages.length - 1];
    if (last?.role === "toolResult" && simulateOpenStep(pi.branchMessages, state, live)) stale = true;
    if (pi.restarted || renderEveryRequest) stale = true;
    pi.restarted = false;
    const context = pi.context;
    let step: ContextStep;
    if (stale) {
      const edited = pi.editedOutputs.size === 0 ? options : { ...options, editedOutputs: pi.editedOutputs };
      const next = sentMessages(pruneMessages(context, state, edited).messages);
      let keep = 0;
      while (keep < sent.length && keep < next.length && sameMessage(sent[keep]!, next[keep]!)) keep++;
      step = { keep, append: next.slice(keep), compressedChains: chains };
      sent = next;
    } else {
      const append = sentMessages(context.slice(renderedFrom));
      step = { keep: sent.length, append, compressedChains: chains };
      for (const message of append) sent.push(message);
    }
    renderedFrom = context.length;
    stale = false;
    chains = 0;
    yield step;
  }
}

/** The same object, or a render's copy of the same message (a stub, a compressed chain: made anew by each render). */
function sameMessage(a: AgentMessage, b: AgentMessage): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}

/**
 * pi's view of the branch so far, grown entry by entry: its context (restarted at a compaction
 * or a context edit, as recording.ts does) and the branch's messages (with the edits so far).
 */
class PiView {
  context: AgentMessage[] = [];
  branchMessages: AgentMessage[] = [];
  /** Set when the context was rebuilt rather than grown. */
  restarted = false;
  /** The branch's chains, detected as it grows. */
  readonly chains = new DetectedChains();
  /** Archived outputs the context edits so far changed (the render shows them as edited: extension/edit-tracker.ts). */
  editedOutputs: ReadonlyMap<string, EditedOutput> = new Map();
  private edits: ContextEdits = new Map() as ContextEdits;

  constructor(private readonly branch: readonly SessionEntry[]) {}

  /** Adds entry `index`; gives its message when it is a message entry. */
  add(index: number): AgentMessage | undefined {
    const entry = this.branch[index]!;
    if (entry.type === "context_edit") {
      const upTo = this.branch.slice(0, index + 1);
      this.edits = editsOnBranch(upTo);
      this.branchMessages = runSteps(branchMessagesSteps(upTo, undefined, this.edits));
      this.chains.reset();
      this.editedOutputs = editedOutputs(upTo, this.edits);
    }
    if (entry.type === "compaction" || entry.type === "context_edit") {
      this.context = runSteps(contextMessagesSteps(this.branch.slice(0, index + 1), undefined, this.edits));
      this.restarted = true;
      return undefined;
    }
    for (const message of runSteps(contextMessagesSteps([entry], undefined, this.edits))) this.context.push(message);
    const own = runSteps(branchMessagesSteps([entry], undefined, this.edits));
    for (const message of own) this.branchMessages.push(message);
    return own[own.length - 1];
  }
}
