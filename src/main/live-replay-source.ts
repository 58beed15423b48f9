/**
 * The "chainpress live" replay policy (issue 47): for each recorded request, the context the
 * extension would have sent had it run from the session's first entry with the given settings.
 * Walking the branch, it keeps pi's context (contextMessages, as recording.ts builds it) and the
 * branch's messages (what the flush detects on); after each reply that closes a chain it runs the
 * flush when its trigger says so (live-replay-flush.ts), and before each request that follows a
 * tool turn the open-chain step (live-replay-state.ts); each request's context is the extension's render
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
import { isSyntheticChainMessage } from "../core/message-text.js";
import { PruneState } from "../core/prune-state.js";
import { pruneMessages, type PruneOptions } from "../core/render/prune-messages.js";
import type { ContextSource, ContextStep, ReplayEnvironment } from "../core/replay/policy.js";
import { sentMessages, type Recording } from "../core/replay/recording.js";
import { branchMessagesSteps, contextMessagesSteps } from "../core/session-tree.js";
import { DEFAULT_SETTINGS, type ChainpressSettings } from "../core/settings.js";
import type { AgentMessage, SessionEntry } from "../core/session-types.js";
import { runSteps } from "../core/steps.js";
import { FlushDecisions } from "./live-replay-flush.js";
import { DetectedChains, flushesAfter, OpenChainTally, simulateOpenStep, type LiveSettings } from "./live-replay-state.js";

export const LIVE_POLICY_NAME = "chainpress live";

export interface LiveOptions {
  /**
   * Render pi's whole context at every request instead of appending where nothing changed, and
   * plan the open chain at every request instead of where its tally says a step may trigger: the
   * check of the incremental shortcuts (linear per request).
   */
  renderEveryRequest?: boolean;
}

/** The live policy under `settings` (default: the extension's defaults). */
export function chainpressLive(settings: ChainpressSettings = DEFAULT_SETTINGS, options: LiveOptions = {}): ContextSource {
  const live: LiveSettings = { settings, isProtected: makeProtectionPredicate(settings) };
  return { name: LIVE_POLICY_NAME, steps: (recording, environment) => liveSteps(recording, environment, live, options.renderEveryRequest === true) };
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

function* liveSteps(recording: Recording, environment: ReplayEnvironment, live: LiveSettings, renderEveryRequest: boolean): Generator<ContextStep> {
  const { branch, requests } = recording;
  const options = renderOptions(live);
  const state = new PruneState();
  const pi = new PiView(branch);
  const flush = new FlushDecisions(live, environment, state, pi, recording.table);
  /** The context last given (as sent), and what it was rendered from. */
  const sent: AgentMessage[] = [];
  let renderedFrom = 0;
  let entry = 0;
  for (const request of requests) {
    for (; entry < request.entryIndex; entry++) {
      // The extension's timer: a deferred flush runs once the cache has expired, before anything follows.
      flush.coldBy(entryTime(branch[entry]!));
      const message = pi.add(entry);
      // The flush decides as the reply ends: its chain entries' compressedAt (the rendered chain message's timestamp).
      if (message !== undefined && flushesAfter(message)) flush.replyEnded(typeof message.timestamp === "number" ? message.timestamp : request.time);
    }
    flush.coldBy(request.time);
    const last = pi.branchMessages[pi.branchMessages.length - 1];
    const stepped = last?.role === "toolResult" && simulateOpenStep(pi.branchMessages, state, live, renderEveryRequest ? undefined : pi.openChain);
    if (pi.restarted || renderEveryRequest) flush.stale = true;
    pi.restarted = false;
    const step = sentStep(sent, pi, state, { options, flush, stepped, renderedFrom });
    renderedFrom = pi.context.length;
    flush.requestSent(request.time, request.model);
    yield step;
  }
}

/**
 * The request's step from the context last sent (`sent`, updated in place): a render where the
 * state changed (only the open chain's where a step alone changed it), else pi's new messages.
 */
function sentStep(sent: AgentMessage[], pi: PiView, state: PruneState, at: { options: PruneOptions; flush: FlushDecisions; stepped: boolean; renderedFrom: number }): ContextStep {
  const { flush, options } = at;
  const context = pi.context;
  if (!flush.stale && !at.stepped) {
    const append = sentMessages(context.slice(at.renderedFrom));
    for (const message of append) sent.push(message);
    flush.contextChars += sumChars(append, flush.charsOf);
    return { keep: sent.length - append.length, append, compressedChains: flush.chains };
  }
  const edited = pi.editedOutputs.size === 0 ? options : { ...options, editedOutputs: pi.editedOutputs };
  // An open-chain step alone changes only the open chain: the render before it stays as sent.
  const next = (!flush.stale && openChainRender(context, sent, state, edited)) || sentMessages(pruneMessages(context, state, edited).messages);
  let keep = 0;
  while (keep < sent.length && keep < next.length && sameMessage(sent[keep]!, next[keep]!)) keep++;
  const step = { keep, append: next.slice(keep), compressedChains: flush.chains };
  // Not splice(…, ...next): a long context would exceed the arguments a call may take.
  sent.length = 0;
  for (const message of next) sent.push(message);
  flush.contextChars = sumChars(sent, flush.charsOf);
  return step;
}

/**
 * The context after an open-chain step: what was sent up to the open chain's user message, then
 * the render of the open chain alone. The step changed only outputs after that message, and
 * nothing there is compressed, swept or relocated from outside it (the test renders every
 * request whole and compares). Undefined where that message is not among those sent.
 */
function openChainRender(context: readonly AgentMessage[], sent: readonly AgentMessage[], state: PruneState, options: PruneOptions): AgentMessage[] | undefined {
  let start = context.length - 1;
  while (start >= 0 && !(context[start]!.role === "user" && !isSyntheticChainMessage(context[start]!))) start--;
  if (start < 0) return undefined;
  const at = sent.lastIndexOf(context[start]!);
  if (at < 0) return undefined;
  return [...sent.slice(0, at), ...sentMessages(pruneMessages(context.slice(start), state, options).messages)];
}

/** An entry's time: its message's timestamp, else the entry's own. */
function entryTime(entry: SessionEntry): number | undefined {
  const message = (entry as { message?: { timestamp?: unknown } }).message;
  if (typeof message?.timestamp === "number") return message.timestamp;
  const stamp = Date.parse((entry as { timestamp?: string }).timestamp ?? "");
  return Number.isNaN(stamp) ? undefined : stamp;
}

function sumChars(messages: readonly AgentMessage[], charsOf: (message: AgentMessage) => number): number {
  let sum = 0;
  for (const message of messages) sum += charsOf(message);
  return sum;
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
  /** The open chain's outputs, kept as it grows. */
  readonly openChain = new OpenChainTally();
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
      this.openChain.invalidate();
      this.editedOutputs = editedOutputs(upTo, this.edits);
    }
    if (entry.type === "compaction" || entry.type === "context_edit") {
      this.context = runSteps(contextMessagesSteps(this.branch.slice(0, index + 1), undefined, this.edits));
      this.restarted = true;
      return undefined;
    }
    for (const message of runSteps(contextMessagesSteps([entry], undefined, this.edits))) this.context.push(message);
    const own = runSteps(branchMessagesSteps([entry], undefined, this.edits));
    for (const message of own) {
      this.branchMessages.push(message);
      this.openChain.add(message);
    }
    return own[own.length - 1];
  }
}
