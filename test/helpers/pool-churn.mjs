// Starts the real worker pool and closes it, over and over, at moments spread over the end of its
// threads' loading (~50-100 ms after the start here); prints "ok" at the end. For test/pool-boot.test.ts: a close that terminated a thread
// mid-load aborted the whole process (Node 20, V8 fatal error).
import { startPool } from "../../dist/src/main/worker-pool.js";

const rounds = Number(process.argv[2] ?? 30);
for (let round = 0; round < rounds; round++) {
  const pool = startPool(2);
  await new Promise((resolve) => setTimeout(resolve, 30 + ((round * 3) % 90)));
  await pool.close();
}
process.stdout.write("ok\n");
