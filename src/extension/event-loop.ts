/** Give pi's event loop a turn (input, rendering, its own event queue) between pieces of work. */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
