/** A bound on concurrent tasks: at most `size` hold a place at once; the others wait, in order. */
export class Slots {
  private free: number;
  private readonly waiting: Array<() => void> = [];
  constructor(size: number) {
    this.free = size;
  }

  /** Runs `work` in a place, given back when it settles. */
  async use<T>(work: () => Promise<T>): Promise<T> {
    const leave = await this.enter();
    try {
      return await work();
    } finally {
      leave();
    }
  }

  /** Takes a place; the function returned gives it back (calling it again does nothing). */
  async enter(): Promise<() => void> {
    if (this.free > 0) this.free--;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      const next = this.waiting.shift();
      if (next) next();
      else this.free++;
    };
  }
}
