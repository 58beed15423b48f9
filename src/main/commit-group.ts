/**
 * Group commit, strictly in chain order. For a group of consecutive chains:
 *   1. write every index entry (each as its chain's work arrives), one fsync, then commit their
 *      records and refs in memory;
 *   2. write every chain entry, one fsync, then register the chains in memory.
 * Each chain entry is written only after its own index entry is durable, and memory changes only
 * after the entries that record the change are durable (append-before-commit), at two fsyncs
 * per group instead of two per chain. Any failure costs only the chains it touched: they keep
 * their `no-summary` skip and the next pass converges.
 */

import { buildBackfilledIndexData, buildChainEntry } from "../core/chain-entry.js";
import { CUSTOM_TYPE_CHAIN, CUSTOM_TYPE_INDEX } from "../core/custom-types.js";
import { guardLightened } from "../core/light-value.js";
import type { PruneState } from "../core/prune-state.js";
import type { ChainCompressionEntry, SkipReason, SummaryToolCallRef, ToolCallRecord } from "../core/prune-types.js";
import { crashPoint } from "../io/crash-points.js";
import { ioFailureOf } from "../io/spill-errors.js";
import type { DataJson } from "../io/append-session.js";
import { pauseIfDue, sliceUsedUp } from "./cooperative.js";
import type { AppendEntry } from "./append-entry.js";
import type { DiagnosticSink } from "./diagnostic-sink.js";
import type { ChainPlan } from "./plan-chains.js";

export interface CommitContext {
  state: PruneState;
  /** Writes one entry; durable once `sync` resolves. */
  append: AppendEntry;
  sync: () => Promise<void>;
  /** Called once each fsync has been asked for, before it is awaited: work started here overlaps it. */
  whileSyncing?: () => void;
  diagnostics: DiagnosticSink;
  now: () => number;
  /** Takes back a worker's index bytes once they are written (or will not be), to carry another chain's. */
  reuseIndexBytes?: (bytes: Uint8Array) => void;
}

/**
 * What a deterministic chain commits: its records and their refs, in order (none on the retry
 * path, which brings no fresh records).
 */
export interface ChainWork {
  records: ToolCallRecord[];
  refs: SummaryToolCallRef[];
  body: string;
  /** The index entry's data, serialised by the worker (the only faithful copy when `records` are lightened). */
  indexDataJson?: DataJson;
  /** The occurrence keys of `records`, in order, when the caller has them (a plan's): the state keeps these strings instead of copies. */
  keys?: readonly string[];
  /** `records` are lightened (core/light-value.ts), as this thread's messages are on the file road: only `indexDataJson` may be written. */
  lightened: boolean;
}

export interface GroupItem {
  plan: ChainPlan;
  /** Deterministic plans: the work, or why there is none. */
  work?: ChainWork;
  failure?: string;
  /** The report's reason for `failure` when it says more than `no-summary` (a typed I/O failure). */
  failureReason?: SkipReason;
}

export interface GroupOutcome {
  plan: ChainPlan;
  entry?: ChainCompressionEntry;
  /** Why the chain was not compressed (skip plans and failures). */
  failure?: string;
  failureReason?: SkipReason;
  /** True when an error, not a planned skip, left the chain uncompressed. */
  failed?: boolean;
}

/**
 * One group's commit. Each chain's index entry is written as soon as its work is there (`add`, in
 * chain order), and its bytes handed back for reuse; `finish` makes them durable together and
 * goes on with the steps above. The file gets the same lines in the same order as writing them
 * all at the end, but the group's index bytes are never all held at once.
 */
export class GroupCommit {
  private readonly slots: Slot[] = [];
  private readonly written: IndexSlot[] = [];

  constructor(private readonly ctx: CommitContext) {}

  /** The items added so far, in order. */
  get items(): readonly GroupItem[] {
    return this.slots;
  }

  async add(item: GroupItem): Promise<void> {
    const slot: Slot = { ...item };
    this.slots.push(slot);
    if (await appendIndexEntry(this.ctx, slot)) this.written.push(slot);
  }

  async finish(): Promise<GroupOutcome[]> {
    await settleIndexEntries(this.ctx, this.written);
    await commitChainEntries(this.ctx, this.slots);
    return this.slots.map(({ plan, entry, failure, failureReason }) =>
      entry ? { plan, entry } : { plan, failure: failure ?? "not compressed", failed: plan.kind !== "skip", ...(failureReason === undefined ? {} : { failureReason }) },
    );
  }
}

interface Slot extends GroupItem {
  pendingEntry?: ChainCompressionEntry;
  entry?: ChainCompressionEntry;
}

/** What the index step reads and marks; the open-chain step (compress-open-chain.ts) passes its own. */
export interface IndexSlot {
  work?: ChainWork;
  failure?: string;
  failureReason?: SkipReason;
}

/** Both index steps for slots that are all there: the open chain's. */
export async function commitIndexEntries(ctx: CommitContext, slots: IndexSlot[]): Promise<void> {
  const written: IndexSlot[] = [];
  for (const slot of slots) if (await appendIndexEntry(ctx, slot)) written.push(slot);
  await settleIndexEntries(ctx, written);
}

/** Writes a slot's index entry (not yet durable); false when it has none or the write failed. */
async function appendIndexEntry(ctx: CommitContext, slot: IndexSlot): Promise<boolean> {
  const work = slot.work;
  if (slot.failure || !work || work.records.length === 0) return false;
  try {
    const data = buildBackfilledIndexData(work.records, work.refs);
    await ctx.append(CUSTOM_TYPE_INDEX, work.lightened ? guardLightened(data) : data, work.indexDataJson);
    return true;
  } catch (error) {
    failSlot(slot, `index append failed: ${(error as Error).message}`, error);
    return false;
  } finally {
    // Written or not, nothing reads these bytes again: the index entry is rebuilt by the next pass.
    if (work.indexDataJson instanceof Uint8Array) ctx.reuseIndexBytes?.(work.indexDataJson);
    delete work.indexDataJson;
  }
}

/** One fsync for the written index entries, then their records and refs in memory. */
async function settleIndexEntries(ctx: CommitContext, written: IndexSlot[]): Promise<void> {
  if (!(await syncOrFail(ctx, written, "index"))) return;
  // Hundreds of records per chain: a turn of the event loop whenever a slice is used up, checked
  // after every record, because the state's maps grow in step and would otherwise double (a
  // rehash of every entry) in the same slice. Nothing reads the state
  // meanwhile (plans were made up front; groups commit one at a time).
  for (const slot of written) {
    const work = slot.work!;
    const { records, refs, keys } = work;
    for (let i = 0; i < records.length; i++) {
      if (sliceUsedUp()) await pauseIfDue();
      ctx.state.indexRecord(records[i]!, { seedDedup: false }, keys?.[i]);
    }
    for (let i = 0; i < refs.length; i++) {
      if (sliceUsedUp()) await pauseIfDue();
      ctx.state.registerRef(refs[i]!, keys?.[i]);
    }
  }
}

async function commitChainEntries(ctx: CommitContext, slots: Slot[]): Promise<void> {
  const written = [];
  for (const slot of slots) {
    if (slot.failure) continue;
    if (slot.plan.kind === "skip") {
      if (slot.plan.diagnostic) await ctx.diagnostics.report(slot.plan.diagnostic);
      slot.failure = slot.plan.cause;
      if (slot.plan.reason !== undefined) slot.failureReason = slot.plan.reason;
      continue;
    }
    try {
      slot.pendingEntry = chainEntryFor(ctx, slot);
      await ctx.append(CUSTOM_TYPE_CHAIN, slot.pendingEntry);
      written.push(slot);
    } catch (error) {
      failSlot(slot, `chain entry not written: ${(error as Error).message}`, error);
    }
  }
  if (!(await syncOrFail(ctx, written, "chain"))) return;
  for (const slot of written) {
    ctx.state.registerChain(slot.pendingEntry!);
    slot.entry = slot.pendingEntry;
    crashPoint("chain-appended");
  }
}

function chainEntryFor(ctx: CommitContext, slot: Slot): ChainCompressionEntry {
  const { plan } = slot;
  if (plan.kind === "skip") throw new Error("skip plans have no entry");
  const toolRefs = ctx.state.refsForKeys(plan.lookupKeys);
  const base = { chain: plan.chain, blockId: plan.blockId, toolRefs, compressedAt: ctx.now() };
  if (plan.kind === "covered") return buildChainEntry({ ...base, deterministic: false });
  if (toolRefs.join(",") !== plan.toolRefs.join(",")) {
    // The body already names plan.toolRefs; an entry that disagrees would mislead the model.
    throw new Error(`refs changed during the pass (${plan.toolRefs.join(",")} → ${toolRefs.join(",")})`);
  }
  return buildChainEntry({ ...base, rangeSummaryText: slot.work!.body, deterministic: true });
}

/** One fsync for the group; if it fails, every entry written since is in doubt: fail them all. */
async function syncOrFail(ctx: CommitContext, written: IndexSlot[], what: string): Promise<boolean> {
  if (written.length === 0) return true;
  try {
    const synced = ctx.sync();
    ctx.whileSyncing?.();
    await synced;
    return true;
  } catch (error) {
    for (const slot of written) failSlot(slot, `${what} entry not durable: ${(error as Error).message}`, error);
    return false;
  }
}

/** Marks a slot failed; a system call's failure also gives its reason (a full disk, say). */
function failSlot(slot: IndexSlot, failure: string, error: unknown): void {
  slot.failure = failure;
  const reason = ioFailureOf(error);
  if (reason !== undefined) slot.failureReason = reason;
}
