// The dispatch window (main/dispatch-window.ts): a chain's task starts as soon as the chain is
// planned and the window has room, never beyond it; the commit takes outcomes in chain order and
// moves the window on.

import { describe, expect, it } from "vitest";
import { DispatchWindow } from "../src/main/dispatch-window.js";
import type { ChainPlan } from "../src/main/plan-chains.js";

/** A plan stand-in: the window never looks inside one. */
const plan = (n: number) => ({ kind: "skip", n }) as unknown as ChainPlan;

function recording(limit: number) {
  const started: number[] = [];
  const finish = new Map<number, (value: string) => void>();
  const window = new DispatchWindow<string>((p) => {
    const n = (p as unknown as { n: number }).n;
    started.push(n);
    return new Promise((resolve) => finish.set(n, resolve));
  }, limit);
  return { window, started, finish };
}

describe("DispatchWindow", () => {
  it("starts each plan's task as it is added, up to the window, and the rest as the window moves", () => {
    const { window, started } = recording(2);
    window.add(plan(0));
    expect(started).toEqual([0]);
    window.add(plan(1));
    window.add(plan(2));
    expect(started).toEqual([0, 1]);
    window.allow(3);
    expect(started).toEqual([0, 1, 2]);
    window.add(plan(3));
    expect(started).toEqual([0, 1, 2]);
  });

  it("gives each outcome once, in any order asked, starting a task the commit needs now", async () => {
    const { window, started, finish } = recording(1);
    for (let n = 0; n < 3; n++) window.add(plan(n));
    const second = window.take(1);
    expect(started).toEqual([0, 1]);
    finish.get(1)!("one");
    await expect(second).resolves.toBe("one");
    expect(() => window.take(1)).toThrow(/taken twice/);
    expect(() => window.take(7)).toThrow(/never planned/);
  });

  it("settles only once every started task not taken has ended", async () => {
    const { window, finish } = recording(3);
    for (let n = 0; n < 3; n++) window.add(plan(n));
    void window.take(0);
    let settled = false;
    const done = window.settled().then(() => (settled = true));
    finish.get(1)!("x");
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    finish.get(2)!("y");
    await done;
    expect(settled).toBe(true);
  });
});
