// A pool worker module that says it has loaded only `workerData.lateMs` after it starts (top-level
// await: piscina then loads it with import()), for test/pool-boot.test.ts.
import { parentPort, threadId, workerData } from "node:worker_threads";
import { workerLoaded } from "../../dist/src/workers/worker-loaded.js";

await new Promise((resolve) => setTimeout(resolve, workerData.lateMs));
parentPort.postMessage(workerLoaded(threadId));

export default function echo(value) {
  return value;
}
