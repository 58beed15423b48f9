/**
 * An open-addressing hash table keyed by 32-bit unsigned numbers (pi's ids, 8 hex digits, as
 * numbers: core/entry-id-set.ts), with an optional int32 value per key. Keys live in a
 * Uint32Array, 4 bytes a slot (8 with values), where a Map or a Set took a slot of ~24 bytes and a
 * heap number per key above 2^30, and, growing, left every smaller table it outgrew in the old
 * generation.
 */

/** Slots of a new table; always a power of two. */
const INITIAL_SLOTS = 1024;
/** Keys per slot before the table doubles: at most half full, so probes stay short. */
const MAX_LOAD = 0.5;
/** Fibonacci hashing's multiplier (2^32 / φ). */
const GOLDEN = 0x9e3779b1;

export class U32Table {
  /** 0 marks an empty slot, so key 0 is kept aside (`zero`). */
  private keys: Uint32Array;
  private values: Int32Array | undefined;
  private shift: number;
  private count = 0;
  private zero: number | undefined;

  /**
   * `withValues`: keep a value per key; without, every key's value is 0 (a set). `expectedKeys`:
   * room for that many from the start (growing re-inserts every key, each time the table doubles).
   */
  constructor(withValues: boolean, expectedKeys = 0) {
    let slots = INITIAL_SLOTS;
    while (expectedKeys > slots * MAX_LOAD) slots *= 2;
    this.keys = new Uint32Array(slots);
    this.shift = 32 - Math.log2(slots);
    if (withValues) this.values = new Int32Array(slots);
  }

  /** The key's value (0 in a set), or undefined when it is absent. */
  get(key: number): number | undefined {
    if (key === 0) return this.zero;
    const slot = this.find(key);
    if (this.keys[slot] !== key) return undefined;
    return this.values ? this.values[slot] : 0;
  }

  /** Sets the key's value; true when the key was there already (one probe for a `get` and a `set`). */
  set(key: number, value = 0): boolean {
    if (key === 0) {
      const had = this.zero !== undefined;
      this.zero = value;
      return had;
    }
    const slot = this.find(key);
    if (this.values) this.values[slot] = value;
    if (this.keys[slot] === key) return true;
    this.keys[slot] = key;
    this.count++;
    if (this.count > this.keys.length * MAX_LOAD) this.grow();
    return false;
  }

  /** Every value, in no particular order. */
  *valuesOf(): Generator<number> {
    if (this.zero !== undefined) yield this.zero;
    for (let slot = 0; slot < this.keys.length; slot++) if (this.keys[slot] !== 0) yield this.values ? this.values[slot]! : 0;
  }

  /** The slot holding `key`, or the empty one where it would go. */
  private find(key: number): number {
    const mask = this.keys.length - 1;
    let slot = Math.imul(key, GOLDEN) >>> this.shift;
    while (this.keys[slot] !== 0 && this.keys[slot] !== key) slot = (slot + 1) & mask;
    return slot;
  }

  private grow(): void {
    const keys = this.keys;
    const values = this.values;
    this.keys = new Uint32Array(keys.length * 2);
    if (values) this.values = new Int32Array(keys.length * 2);
    this.shift--;
    for (let old = 0; old < keys.length; old++) {
      const key = keys[old]!;
      if (key === 0) continue;
      const slot = this.find(key);
      this.keys[slot] = key;
      if (values) this.values![slot] = values[old]!;
    }
  }
}
