/**
 * Pairs of strings logged in order, kept in chunks each made at its full size. Grown by push as one
 * array, a log of two items per archived record left each copy it outgrew in the old generation; a
 * chunk is never copied. Chunks double from a small first one, so a small log stays small.
 */

/** Items (two per pair) of the first chunk, and the most of any chunk. */
const FIRST_CHUNK_ITEMS = 64;
const MAX_CHUNK_ITEMS = 8192;

export class PairLog {
  private readonly full: string[][] = [];
  private chunk: string[] = new Array<string>(FIRST_CHUNK_ITEMS);
  private used = 0;

  add(a: string, b: string): void {
    if (this.used === this.chunk.length) {
      this.full.push(this.chunk);
      this.chunk = new Array<string>(Math.min(this.chunk.length * 2, MAX_CHUNK_ITEMS));
      this.used = 0;
    }
    this.chunk[this.used++] = a;
    this.chunk[this.used++] = b;
  }

  /** Every pair, in the order it was added. */
  forEach(visit: (a: string, b: string) => void): void {
    for (const chunk of this.full) for (let i = 0; i < chunk.length; i += 2) visit(chunk[i]!, chunk[i + 1]!);
    for (let i = 0; i < this.used; i += 2) visit(this.chunk[i]!, this.chunk[i + 1]!);
  }
}
