/**
 * In-memory pruning state (upstream's indexer + chain registry + block issuer): archived records
 * by occurrence key, short-ref maps, dedup aliases, per-batch summary coverage and compressed
 * chains. Pure: it is rebuilt from session entries (reconstruct.ts) and changed only after the
 * matching entry was durably appended.
 */

import { contentHash } from "./content-hash.js";
import { isOccurrenceKeyOf, occurrenceKey, parseOccurrenceKey } from "./occurrence-key.js";
import { PairLog } from "./pair-log.js";
import type { ChainCompressionEntry, SummaryToolCallRef, ToolCallRecord } from "./prune-types.js";

const SHORT_REF = /^t(\d+)$/;
const SHORT_REF_PREFIX = "t";
const BLOCK_PREFIX = "b";

/** `given` when it is the occurrence key of the id and timestamp, else their key: a wrong hint costs a copy, never a wrong entry. */
function sameOrOwn(given: string | undefined, toolCallId: string, resultTimestamp: number | undefined): string {
  return given !== undefined && isOccurrenceKeyOf(given, toolCallId, resultTimestamp) ? given : occurrenceKey(toolCallId, resultTimestamp);
}

/** A map made by replaying logged (a, b) pairs in order, each with `add`. */
function mapFromLog<V>(log: PairLog, add: (index: Map<string, V>, a: string, b: string) => void): Map<string, V> {
  const index = new Map<string, V>();
  log.forEach((a, b) => add(index, a, b));
  return index;
}

/** Adds `key` to the keys `bareId` was archived under, unless it is there already. */
function addBareKey(index: Map<string, string | string[]>, bareId: string, key: string): void {
  const keys = index.get(bareId);
  if (keys === undefined) index.set(bareId, key);
  else if (typeof keys === "string") {
    if (keys !== key) index.set(bareId, [keys, key]);
  } else if (!keys.includes(key)) keys.push(key);
}

export class PruneState {
  /** Archived records by occurrence key (legacy records by bare id). */
  readonly records = new Map<string, ToolCallRecord>();
  /**
   * Every key a bare id was archived under, first-seen order: the key itself when there is one
   * (nearly always), an array only for several, which spares an array per record. Read through
   * keysOf, which builds it: only a query and a legacy record's stub ask, so until then
   * indexRecord logs each (bare id, key) pair in `bareKeyLog` instead, sparing a compaction's
   * commits a map lookup and insert per record.
   */
  private keysByBareId: Map<string, string | string[]> | undefined;
  private bareKeyLog = new PairLog();
  readonly refByKey = new Map<string, string>();
  /** Short ref → key, built on first read (a query, or a render's archive map); until then `refKeyLog` keeps (ref, key) pairs, as for keysByBareId. */
  private keyByRefIndex: Map<string, string> | undefined;
  private refKeyLog = new PairLog();
  /** Dedup alias key → original key. */
  readonly dedupAliases = new Map<string, string>();
  /** Per-batch summary texts by the occurrence keys they cover (what "coverage" reads). */
  readonly summaryTextsByKey = new Map<string, string[]>();
  /** Compressed chains by start user timestamp. */
  readonly chains = new Map<number, ChainCompressionEntry>();
  nextRefNumber = 1;
  nextBlockNumber = 1;
  private readonly dedupSeeds: ToolCallRecord[] = [];
  private dedupCache: Map<string, string> | null = null;

  /**
   * Archive a record. Backfilled records never seed the dedup canonicals. `key`, when the caller
   * has the record's occurrence key already (a plan's), is kept instead of a new copy of it: each
   * map would otherwise hold a string of its own per record (~100 bytes each).
   */
  indexRecord(record: ToolCallRecord, options: { seedDedup: boolean }, key?: string): void {
    key = sameOrOwn(key, record.toolCallId, record.resultTimestamp);
    this.records.set(key, record);
    if (this.keysByBareId === undefined) this.bareKeyLog.add(record.toolCallId, key);
    else addBareKey(this.keysByBareId, record.toolCallId, key);
    if (options.seedDedup) {
      this.dedupSeeds.push(record);
      this.dedupCache = null;
    }
  }

  /** Every key a bare id was archived under, first-seen order. */
  keysOf(bareId: string): readonly string[] {
    const keys = this.bareIdIndex().get(bareId);
    return keys === undefined ? [] : typeof keys === "string" ? [keys] : keys;
  }

  private bareIdIndex(): Map<string, string | string[]> {
    if (this.keysByBareId === undefined) {
      this.keysByBareId = mapFromLog(this.bareKeyLog, addBareKey);
      this.bareKeyLog = new PairLog();
    }
    return this.keysByBareId;
  }

  get keyByRef(): ReadonlyMap<string, string> {
    if (this.keyByRefIndex === undefined) {
      this.keyByRefIndex = mapFromLog(this.refKeyLog, (index, ref, key) => index.set(ref, key));
      this.refKeyLog = new PairLog();
    }
    return this.keyByRefIndex;
  }

  isIndexed(key: string): boolean {
    return this.records.has(key);
  }

  /** Register a short ref (reference §3.3); refs equal to their key register no alias. `key` as for indexRecord. */
  registerRef(ref: SummaryToolCallRef, key?: string): void {
    if (!ref.shortId || !ref.toolCallId) return;
    key = sameOrOwn(key, ref.toolCallId, ref.resultTimestamp);
    if (ref.shortId !== key) {
      if (this.keyByRefIndex === undefined) this.refKeyLog.add(ref.shortId, key);
      else this.keyByRefIndex.set(ref.shortId, key);
      this.refByKey.set(key, ref.shortId);
    }
    const match = SHORT_REF.exec(ref.shortId);
    if (match) this.nextRefNumber = Math.max(this.nextRefNumber, Number(match[1]) + 1);
  }

  /** Reserve `count` consecutive `t<N>` ids; the counter moves even if they are never used. */
  reserveRefs(count: number): string[] {
    const refs: string[] = [];
    for (let i = 0; i < count; i++) refs.push(`${SHORT_REF_PREFIX}${this.nextRefNumber++}`);
    return refs;
  }

  /** The ids reserveRefs(count) and reserveBlockId() would give now, reserving nothing. */
  peekRefs(count: number): string[] {
    return Array.from({ length: count }, (_, i) => `${SHORT_REF_PREFIX}${this.nextRefNumber + i}`);
  }

  peekBlockId(): string {
    return `${BLOCK_PREFIX}${this.nextBlockNumber}`;
  }

  reserveBlockId(): string {
    return `${BLOCK_PREFIX}${this.nextBlockNumber++}`;
  }

  registerChain(entry: ChainCompressionEntry): void {
    this.chains.set(entry.startUserTimestamp, entry);
    const n = Number.parseInt(entry.blockId.slice(1), 10);
    if (Number.isFinite(n)) this.nextBlockNumber = Math.max(this.nextBlockNumber, n + 1);
  }

  isCompressed(startUserTimestamp: number): boolean {
    return this.chains.has(startUserTimestamp);
  }

  registerSummaryText(keys: readonly string[], text: string): void {
    for (const key of keys) {
      const texts = this.summaryTextsByKey.get(key);
      if (!texts) this.summaryTextsByKey.set(key, [text]);
      else if (!texts.includes(text)) texts.push(text);
    }
  }

  /** True when any per-batch summary lists any of the keys (upstream's any-overlap rule). */
  hasSummaryCovering(keys: readonly string[]): boolean {
    return keys.some((key) => this.summaryTextsByKey.has(key));
  }

  /** Distinct summary texts covering the keys, in key order. */
  summaryTextsFor(keys: readonly string[]): string[] {
    const texts: string[] = [];
    for (const key of keys) for (const text of this.summaryTextsByKey.get(key) ?? []) if (!texts.includes(text)) texts.push(text);
    return texts;
  }

  /** Point a duplicate occurrence at its original; it inherits the original's short ref. */
  registerDedupAlias(duplicateKey: string, originalKey: string): void {
    this.dedupAliases.set(duplicateKey, originalKey);
    const ref = this.refByKey.get(originalKey);
    if (ref !== undefined) this.refByKey.set(duplicateKey, ref);
  }

  /** Content hash → first archived key, seeded by normal (non-backfilled) records only. Built lazily. */
  dedupCanonicals(): ReadonlyMap<string, string> {
    if (this.dedupCache) return this.dedupCache;
    const map = new Map<string, string>();
    for (const record of this.dedupSeeds) {
      const hash = record.contentHash ?? contentHash(record.toolName, record.resultText);
      if (!map.has(hash)) map.set(hash, occurrenceKey(record.toolCallId, record.resultTimestamp));
    }
    this.dedupCache = map;
    return map;
  }

  /** The record an occurrence key stands for, through a dedup alias if needed. */
  recordForKey(key: string): ToolCallRecord | undefined {
    return this.records.get(key) ?? this.recordThroughAlias(key);
  }

  private recordThroughAlias(key: string): ToolCallRecord | undefined {
    const original = this.dedupAliases.get(key);
    return original === undefined ? undefined : this.records.get(original);
  }

  /** Short ref of a key, or the bare id when it has none (what stubs and bodies print). */
  displayRef(key: string): string {
    return this.refByKey.get(key) ?? parseOccurrenceKey(key).toolCallId;
  }

  /** Registered short refs of the keys, in key order, skipping keys without one. */
  refsForKeys(keys: readonly string[]): string[] {
    const refs: string[] = [];
    for (const key of keys) {
      const ref = this.refByKey.get(key);
      if (ref !== undefined) refs.push(ref);
    }
    return refs;
  }
}
