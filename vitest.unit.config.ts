// `npm run test:unit`: the fast loop for editing, under a minute on two cores. The pure core,
// the render, the session reader and appender, and the extension's handlers on pi's real
// SessionManager (no worker threads, no child processes). `npm test` still runs everything.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: [
      "test/core-*.test.ts",
      "test/render-*.test.ts",
      "test/session-{tree,read,migrate}.test.ts",
      "test/{entry-lines,entry-locations,shard-codec,shard-bounds,repeated-strings,encode-slice,dispatch-window,buffer-pool,file-slice-columns}.test.ts",
      "test/{query,read-spill,write-spill,open-chains,extension-*}.test.ts",
    ],
    exclude: ["test/render-map.test.ts"],
    testTimeout: 60_000,
    pool: "forks",
  },
});
