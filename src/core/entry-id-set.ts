/**
 * A session's entry ids, as a set that also knows the last id added (the appender's leaf). pi's
 * ids are 8 lowercase hex digits: those are kept as 32-bit numbers in an open-addressing table
 * (core/u32-table.ts), in far less memory than a Set<string> of them. Any other id goes into an
 * ordinary Set.
 */

import { U32Table } from "./u32-table.js";

export class EntryIdSet {
  /** Hex ids as numbers (core/u32-table.ts). */
  private readonly numbers: U32Table;
  private readonly others = new Set<string>();
  private lastId: string | null = null;

  /** `expectedIds`: room for that many from the start. */
  constructor(expectedIds = 0) {
    this.numbers = new U32Table(false, expectedIds);
  }

  /** The id added last (added again counts), or null. */
  get last(): string | null {
    return this.lastId;
  }

  has(id: string): boolean {
    const value = hexIdValue(id);
    return value < 0 ? this.others.has(id) : this.numbers.get(value) !== undefined;
  }

  /** Adds the id (again: it becomes the last); true when it was there already. */
  add(id: string): boolean {
    this.lastId = id;
    const value = hexIdValue(id);
    if (value >= 0) return this.numbers.set(value);
    const had = this.others.has(id);
    this.others.add(id);
    return had;
  }
}

/** Digits of a pi id. */
export const HEX_ID_DIGITS = 8;

/** The number 8 lowercase hex digits write (a pi id), or -1 for any other string. */
export function hexIdValue(id: string): number {
  if (id.length !== HEX_ID_DIGITS) return -1;
  let value = 0;
  for (let i = 0; i < HEX_ID_DIGITS; i++) {
    const digit = hexIdDigit(id.charCodeAt(i));
    if (digit < 0) return -1;
    value = value * 16 + digit;
  }
  return value;
}

/** A digit of a pi id (0-9, a-f: lower case only), from its character code or byte; -1 for any other. */
export function hexIdDigit(code: number): number {
  return code >= 0x30 && code <= 0x39 ? code - 0x30 : code >= 0x61 && code <= 0x66 ? code - 0x57 : -1;
}
