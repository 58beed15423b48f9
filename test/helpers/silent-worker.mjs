// A pool worker module that never says it has loaded (a thread that failed to start, as the pool
// sees it), for test/pool-boot.test.ts.
export default function echo(value) {
  return value;
}
