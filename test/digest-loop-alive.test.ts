// Loading the xxhash WASM module holds the event loop alive until it is compiled
// (core/digest.ts): a loop left empty while V8 compiles in the background sends Node 20 into
// NodePlatform::DrainTasks, which can deadlock (nodejs/node#54918; a CLI run hung so once).

import { describe, expect, it } from "vitest";
import { loadHasher } from "../src/core/digest.js";

const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === "Timeout").length;

describe("loading the hasher", () => {
  it("keeps a timer pending while the module compiles, and none once it has", async () => {
    const before = timers();
    const loading = loadHasher();
    expect(timers()).toBe(before + 1);
    const hasher = await loading;
    expect(hasher.hex64("abc")).toMatch(/^[0-9a-f]{16}$/);
    expect(timers()).toBe(before);
    // Loaded once per thread: a second call holds nothing.
    const again = loadHasher();
    expect(timers()).toBe(before);
    expect(await again).toBe(hasher);
  });
});
