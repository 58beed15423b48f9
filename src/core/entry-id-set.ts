/**
 * A session's entry ids, as a set that also knows the last id added (the appender's leaf). pi's
 * ids are 8 lowercase hex digits: those are kept as 32-bit numbers in an open-addressing table, 4
 * to 8 bytes each, where a Set<string> took a slot of ~24 bytes per id and, growing, left every
 * smaller table it outgrew in the old generation (~9 MB at 200x1M's 238k ids, measured with V8's
 * sampling heap profiler). Any other id goes into an ordinary Set.
 */

/** Slots of a new table; always a power of two. */
const INITIAL_SLOTS = 1024;
/** Numbers per slot before the table doubles: at most half full, so probes stay short. */
const MAX_LOAD = 0.5;
/** Fibonacci hashing's multiplier (2^32 / φ). */
const GOLDEN = 0x9e3779b1;

export class EntryIdSet {
  /** Hex ids as numbers + nothing: 0 marks an empty slot, so the id "00000000" is `hasZero`. */
  private slots = new Uint32Array(INITIAL_SLOTS);
  private shift = 32 - Math.log2(INITIAL_SLOTS);
  private numbers = 0;
  private hasZero = false;
  private readonly others = new Set<string>();
  private lastId: string | null = null;

  /** The id added last (added again counts), or null. */
  get last(): string | null {
    return this.lastId;
  }

  has(id: string): boolean {
    const value = hexValue(id);
    if (value < 0) return this.others.has(id);
    if (value === 0) return this.hasZero;
    return this.slots[this.find(value)] === value;
  }

  add(id: string): void {
    this.lastId = id;
    const value = hexValue(id);
    if (value < 0) this.others.add(id);
    else if (value === 0) this.hasZero = true;
    else this.addNumber(value);
  }

  private addNumber(value: number): void {
    const slot = this.find(value);
    if (this.slots[slot] === value) return;
    this.slots[slot] = value;
    this.numbers++;
    if (this.numbers > this.slots.length * MAX_LOAD) this.grow();
  }

  /** The slot holding `value`, or the empty one where it would go. */
  private find(value: number): number {
    const mask = this.slots.length - 1;
    let slot = Math.imul(value, GOLDEN) >>> this.shift;
    while (this.slots[slot] !== 0 && this.slots[slot] !== value) slot = (slot + 1) & mask;
    return slot;
  }

  private grow(): void {
    const old = this.slots;
    this.slots = new Uint32Array(old.length * 2);
    this.shift--;
    for (const value of old) if (value !== 0) this.slots[this.find(value)] = value;
  }
}

/** The number 8 lowercase hex digits write, or -1 for any other string. */
function hexValue(id: string): number {
  if (id.length !== 8) return -1;
  let value = 0;
  for (let i = 0; i < 8; i++) {
    const code = id.charCodeAt(i);
    const digit = code >= 0x30 && code <= 0x39 ? code - 0x30 : code >= 0x61 && code <= 0x66 ? code - 0x57 : -1;
    if (digit < 0) return -1;
    value = value * 16 + digit;
  }
  return value;
}
