/**
 * JSON.stringify at any depth. V8's JSON.stringify recurses and throws "Maximum call stack size
 * exceeded" past about 4,000 levels (Node 20 and 22 alike), while JSON.parse reads any depth, so a
 * session line pi loads (a call's arguments or a result's `details` nested 100,000 deep) could
 * not be written back, measured or rendered. `jsonText` gives JSON.stringify's exact text for
 * every value: the native call first (every normal value), and only when it runs out of stack an
 * iterative writer with an explicit stack. Pure.
 */

/**
 * Deeper than this, a value does not cross threads as an object (it goes as JSON text): structured
 * cloning recurses and runs out of stack near 3,000 levels, msgpackr's `pack` near 1,300 (Node 20).
 * Real messages and arguments nest a few levels.
 */
export const CLONE_MAX_DEPTH = 512;

/**
 * `JSON.stringify(value)`, byte for byte, whatever the depth; typed as TypeScript types
 * JSON.stringify (undefined for undefined, a function, a symbol). Errors other than running out
 * of stack (a cycle, a BigInt, a `toJSON` that throws) are JSON.stringify's own.
 */
export function jsonText(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch (error) {
    // Out of stack: the only RangeError JSON.stringify throws before its output is too long for a
    // string, and the iterative writer then fails on that length in the same way.
    if (!(error instanceof RangeError)) throw error;
  }
  return iterativeJsonText(value) as string;
}

/** An object or array being written: its keys (undefined for an array) and the next one. */
interface Frame {
  node: Record<string, unknown> | unknown[];
  keys: string[] | undefined;
  next: number;
  /** Something was written inside (a comma goes before the next member). */
  wrote: boolean;
}

/** JSON.stringify's algorithm (SerializeJSONProperty) with an explicit stack instead of recursion (exported for its tests). */
export function iterativeJsonText(root: unknown): string | undefined {
  const parts: string[] = [];
  const stack: Frame[] = [];
  // The containers being written, for JSON.stringify's cycle error (a cycle would loop forever).
  const open = new Set<object>();
  const enter = (holder: unknown, key: string): string | undefined => {
    let value = holder;
    if (typeof value === "object" && value !== null && typeof (value as { toJSON?: unknown }).toJSON === "function") {
      value = (value as { toJSON: (key: string) => unknown }).toJSON(key);
    }
    if (typeof value !== "object" || value === null || isBoxed(value)) return JSON.stringify(value) as string | undefined;
    if (open.has(value)) throw new TypeError("Converting circular structure to JSON");
    open.add(value);
    const array = Array.isArray(value);
    stack.push({ node: value as Frame["node"], keys: array ? undefined : Object.keys(value), next: 0, wrote: false });
    return array ? "[" : "{";
  };
  const first = enter(root, "");
  if (first === undefined) return undefined;
  parts.push(first);
  while (stack.length > 0) {
    const frame = stack[stack.length - 1]!;
    const { node, keys } = frame;
    if (keys === undefined) {
      const items = node as unknown[];
      if (frame.next === items.length) {
        parts.push("]");
        close(stack, open);
        continue;
      }
      const index = frame.next++;
      const text = enter(items[index], String(index));
      parts.push(index > 0 ? "," : "", text ?? "null");
      continue;
    }
    if (frame.next === keys.length) {
      parts.push("}");
      close(stack, open);
      continue;
    }
    const key = keys[frame.next++]!;
    const text = enter((node as Record<string, unknown>)[key], key);
    if (text === undefined) continue;
    parts.push(frame.wrote ? "," : "", JSON.stringify(key), ":", text);
    frame.wrote = true;
  }
  return parts.join("");
}

function close(stack: Frame[], open: Set<object>): void {
  open.delete(stack.pop()!.node);
}

/** A Number, String or Boolean object: JSON.stringify writes its primitive. */
function isBoxed(value: object): boolean {
  return value instanceof Number || value instanceof String || value instanceof Boolean;
}

/**
 * True when `value` nests containers more than `max` deep (a primitive is 0 deep, `[]` 1), found
 * without recursion; a cycle counts as deeper than any `max`.
 */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const nodes: unknown[] = [value];
  const depths: number[] = [0];
  while (nodes.length > 0) {
    const node = nodes.pop();
    const depth = depths.pop()! + 1;
    if (typeof node !== "object" || node === null) continue;
    if (depth > max) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (typeof child !== "object" || child === null) continue;
      nodes.push(child);
      depths.push(depth);
    }
  }
  return false;
}
