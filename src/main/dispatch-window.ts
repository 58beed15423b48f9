/**
 * The chains of a pass in chain order, and the tasks started for them: each task starts as soon as
 * its chain is planned and the window has room, so the workers take the first chains while the main
 * thread still plans the later ones, instead of sitting idle through the planning. The window
 * (chains started and not yet taken by the commit) bounds memory; the commit moves it on. Planning
 * never waits for a task and the commit starts only once planning is done, so a plan never sees a
 * commit's state changes, whatever the pool's speed: the same plans, refs and bytes for any worker
 * count.
 */

import type { ChainPlan } from "./plan-chains.js";

export class DispatchWindow<Outcome> {
  readonly plans: ChainPlan[] = [];
  private readonly started = new Map<number, Promise<Outcome>>();
  private next = 0;

  constructor(
    private readonly start: (plan: ChainPlan) => Promise<Outcome>,
    private limit: number,
  ) {}

  /** The next chain's plan (in chain order); its task starts now if the window has room. */
  add(plan: ChainPlan): void {
    this.plans.push(plan);
    this.fill();
  }

  /** Lets the tasks of plans before index `end` start. */
  allow(end: number): void {
    this.limit = Math.max(this.limit, end);
    this.fill();
  }

  /** The outcome of plan `i`'s task, started now if it was not; taken once. */
  take(i: number): Promise<Outcome> {
    this.allow(i + 1);
    const outcome = this.started.get(i);
    if (outcome === undefined) throw new Error(`internal error: chain ${i} of ${this.plans.length} was taken twice or never planned`);
    this.started.delete(i);
    return outcome;
  }

  /** Resolves once every task started and not taken has ended (a pass that fails leaves none running). */
  async settled(): Promise<void> {
    await Promise.allSettled(this.started.values());
  }

  private fill(): void {
    for (; this.next < this.plans.length && this.next < this.limit; this.next++) this.started.set(this.next, this.start(this.plans[this.next]!));
  }
}
