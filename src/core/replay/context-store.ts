/**
 * Contexts as sequences of message identities (message-table.ts), built incrementally: a context
 * is the previous one with `keep` leading messages kept and others appended. Appending at the tip
 * of a segment shares it; keeping less starts a new segment that copies the kept ids and remembers
 * its parent, so the prefix two consecutive contexts share is found without comparing them whole.
 * Token prefix sums are made per segment on demand, once tokens are final (after calibration).
 */

/** An append-only run of message ids. */
export class Segment {
  readonly ids: number[];
  /** Token sums: prefix[k] = tokens of ids[0..k). Grown on demand. */
  private readonly prefix: number[] = [0];

  constructor(
    ids: number[],
    /** The segment this one was forked from, and how many leading ids the two share for sure. */
    readonly parent: Segment | null,
    readonly forkAt: number,
  ) {
    this.ids = ids;
  }

  /** Tokens of ids[0..length), with `tokensOf` final for those ids. */
  tokensUpTo(length: number, tokensOf: (id: number) => number): number {
    const prefix = this.prefix;
    for (let k = prefix.length - 1; k < length; k++) prefix.push(prefix[k]! + tokensOf(this.ids[k]!));
    return prefix[length]!;
  }
}

/** A context: the first `length` ids of `segment`. */
export interface ContextRef {
  readonly segment: Segment;
  readonly length: number;
}

export const EMPTY_CONTEXT: ContextRef = { segment: new Segment([], null, 0), length: 0 };

/** The context after `previous`: its first `keep` ids, then `append`. */
export function nextContext(previous: ContextRef, keep: number, append: readonly number[]): ContextRef {
  const kept = Math.min(keep, previous.length);
  const { segment } = previous;
  if (kept === previous.length && previous.length === segment.ids.length) {
    for (const id of append) segment.ids.push(id);
    return { segment, length: segment.ids.length };
  }
  const ids = segment.ids.slice(0, kept);
  for (const id of append) ids.push(id);
  return { segment: new Segment(ids, segment, kept), length: ids.length };
}

/** How many leading ids two contexts share. */
export function sharedLength(a: ContextRef, b: ContextRef): number {
  const most = Math.min(a.length, b.length);
  let sure = 0;
  if (a.segment === b.segment) return most;
  if (b.segment.parent === a.segment) sure = Math.min(most, b.segment.forkAt);
  else if (a.segment.parent === b.segment) sure = Math.min(most, a.segment.forkAt);
  const x = a.segment.ids;
  const y = b.segment.ids;
  while (sure < most && x[sure] === y[sure]) sure++;
  return sure;
}

/** The ids of a context, in order (for checks and reports). */
export function idsOf(context: ContextRef): number[] {
  return context.segment.ids.slice(0, context.length);
}
