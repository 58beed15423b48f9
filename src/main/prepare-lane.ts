/**
 * Task preparation (encoding a span, or listing its lines in the file) runs one task after
 * another, with a turn of the event loop between two when a slice is used up: the first window
 * dispatches a dozen chains at once, and preparing them back to back would hold the loop. One
 * lane per pass (main/compress-eligible.ts).
 */

import { pauseIfDue } from "./cooperative.js";

export class PrepareLane {
  private tail: Promise<unknown> = Promise.resolve();

  /** Runs `prepare` once every preparation queued before it has settled; a failure holds up none of the others. */
  run<T>(prepare: () => T | Promise<T>): Promise<T> {
    const prepared = this.tail.then(async () => {
      await pauseIfDue();
      return prepare();
    });
    this.tail = prepared.catch(() => undefined);
    return prepared;
  }
}
