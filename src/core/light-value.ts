/**
 * Lightened entries: the main thread plans a compaction from entries whose bulky strings (tool
 * outputs, message texts and thinking, file contents in arguments, image data) were replaced
 * where they were parsed, in a worker, by a short placeholder. Only strings known to be bulk are
 * lightened, and two subtrees planning never reads (an assistant's `usage`, a tool result's
 * `details`) become one placeholder each; identifiers, names, paths, timestamps and every other
 * field stay exactly as they are (an id or a session id that changed would change what is
 * written). A lightened string keeps no head, except in a user message, whose texts keep their
 * first 64 characters after leading whitespace (the `<compressed-chain` test), and inside
 * tool-call arguments, whose JSON keeps its first 256 characters (a retry body and an archived
 * output's stub quote the first 200 JSON characters of a call's arguments); a `path` argument up
 * to PATH_MAX stays whole (protection globs match whole paths); an image part's `data` keeps its
 * first IMAGE_HEAD_CHARS characters, where its header gives its size (core/image-tokens.ts: an
 * image is measured as billed, from that head alone). The placeholder carries how many
 * JSON characters it stands in for (core/light-placeholder.ts), so a context's size computed on
 * lightened messages equals the one computed on the real messages.
 *
 * A lightened value must never be written anywhere: it is an index, not the data.
 *
 * A value parsed with refs (core/literal-refs.ts) is lightened from its refs' facts: a long string
 * that stays a ref is sized and cut without being decoded, beyond its head.
 */

import { IMAGE_HEAD_CHARS } from "./image-tokens.js";
import { jsonText } from "./json-text.js";
import { jsonStringLength, PLACEHOLDER_MAX_CHARS, placeholderWorth } from "./light-placeholder.js";
import { refOf, refPrefix, refText, resolvedJsonLength, type LiteralRef } from "./literal-refs.js";

/**
 * Characters kept in front of a placeholder in a user message's texts, after leading whitespace;
 * also the length up to which any bulk string stays whole. Nothing else reads the head of an
 * assistant's text, a thinking block or a tool result on the main thread (lengths come from the
 * placeholders): kept there too, the heads were a large share of a big session's peak RSS.
 */
export const LIGHT_KEEP_CHARS = 64;
/**
 * How much of a call's arguments (`arguments`, `input`, `args` of calls and records) stays exact,
 * in JSON characters from their start: the excerpts that quote arguments read their first
 * EXCERPT_MAX_UNITS (200), and this leaves a margin. A string there keeps its head up to this
 * point; one starting past it keeps none (an edit's `newText` after its `oldText`).
 */
export const LIGHT_ARGS_KEEP_CHARS = 256;
/** `path` values (what protection rules match) are kept whole up to this length (PATH_MAX). */
export const LIGHT_PATH_MAX = 4096;

/** Keys whose values are a tool call's arguments: every string inside may be lightened. */
const ARGS_KEYS = new Set(["arguments", "input", "args"]);
/** Keys whose whole value planning never reads: an object there (outside a call's arguments) becomes one placeholder string. */
const SUBTREE_KEYS = new Set(["usage"]);
/**
 * The same in a tool result only: its `details` (an edit's diff, a command's truncation facts).
 * A render replaces a tool result whole or keeps it as it is, never copying them; the `details`
 * that rendering reads are a per-batch summary's, in a custom message.
 */
const TOOL_RESULT_SUBTREE_KEYS = new Set(["usage", "details"]);
const MIN_SUBTREE_CHARS = 32;
/** Keys whose string values are bulk text, never an identifier. */
const BULK_KEYS = new Set(["text", "thinking", "thinkingSignature", "signature", "content", "data", "resultText", "resultPreview", "rangeSummaryText", "summary"]);

/**
 * `text` when it has at most `max` characters, else its first `keep` characters (after leading
 * whitespace) plus a placeholder worth the JSON characters that were cut.
 */
export function lightString(text: string, max = LIGHT_KEEP_CHARS, keep = Math.min(max, LIGHT_KEEP_CHARS), textJsonLength = jsonStringLength(text)): string {
  if (text.length <= max) return text;
  // Leading whitespace is kept only in front of a head.
  const lead = keep === 0 ? 0 : text.length - text.trimStart().length;
  // Nothing worth cutting (mostly leading whitespace): the text stays whole.
  if (lead + keep + PLACEHOLDER_MAX_CHARS >= text.length) return text;
  const head = text.slice(0, lead + keep);
  // Computed on the exact strings, so escapes and a surrogate pair cut in half are accounted for.
  return `${head}${placeholderWorth(textJsonLength - jsonStringLength(head))}`;
}

/** When a string is lightened: above `max` characters, keeping `keep`. */
interface Rule {
  max: number;
  keep: number;
}
const NEVER: Rule = { max: Number.POSITIVE_INFINITY, keep: 0 };
const BULK: Rule = { max: LIGHT_KEEP_CHARS, keep: 0 };
const USER_BULK: Rule = { max: LIGHT_KEEP_CHARS, keep: LIGHT_KEEP_CHARS };
const IN_ARGS: Rule = { max: LIGHT_ARGS_KEEP_CHARS, keep: LIGHT_ARGS_KEEP_CHARS };
const PATH: Rule = { max: LIGHT_PATH_MAX, keep: LIGHT_ARGS_KEEP_CHARS };
const IMAGE_DATA: Rule = { max: IMAGE_HEAD_CHARS, keep: IMAGE_HEAD_CHARS };

/** `rule` with each shorter head, by its length: what argsRule gives, made once, up front. */
function shorterHeads(rule: Rule): readonly Rule[] {
  return Array.from({ length: rule.keep }, (_, keep) => ({ max: rule.max, keep }));
}
const IN_ARGS_SHORTER = shorterHeads(IN_ARGS);
const PATH_SHORTER = shorterHeads(PATH);

/** A child's place in its arguments' JSON is unknown (it follows a container, whose length is known only later). */
const UNKNOWN_AT = -1;

/**
 * The rule for a string of a call's arguments (`rule` is IN_ARGS or PATH) whose opening quote is
 * at `at` in their JSON: a head that ends LIGHT_ARGS_KEEP_CHARS characters in, none when it starts
 * there or later. Every character before that point is then the real argument's (a head is a
 * prefix, and the lengths `at` adds up are the real ones), so the first EXCERPT_MAX_UNITS of the
 * JSON are exact. Where the place is unknown (inside or after a nested container), the whole head
 * is kept, as before.
 */
function argsRule(rule: Rule, at: number): Rule {
  if (at === UNKNOWN_AT) return rule;
  const keep = Math.max(0, LIGHT_ARGS_KEEP_CHARS - at);
  return keep >= rule.keep ? rule : (rule === PATH ? PATH_SHORTER : IN_ARGS_SHORTER)[keep]!;
}

/** Where what follows `child` starts: `chars` (its real JSON length) on, unless a container makes it unknown. */
function nextAt(at: number, child: unknown, chars: number): number {
  return typeof child === "object" && child !== null ? UNKNOWN_AT : advance(at, chars);
}

function advance(at: number, chars: number): number {
  return at === UNKNOWN_AT ? UNKNOWN_AT : at + chars;
}

/** What a container lies inside (bit flags of the walk's `modes`). */
const IN_CALL_ARGS = 1;
const IN_USER = 2;
/** The container is a call's arguments themselves (not one nested in them): its children's places are counted. */
const ARGS_ROOT = 4;

/** Most key lengths a Lightener remembers. */
const KEY_LENGTHS_MAX = 4096;

/**
 * {@link Lightener.lighten} for one value. A pass that lightens many (a shard, a chain's records)
 * keeps one Lightener instead, which reuses its queue from value to value.
 */
export function lightenInPlace(value: unknown, refs?: readonly LiteralRef[], skipKey?: string): number {
  return new Lightener().lighten(value, refs, skipKey);
}

/**
 * Lightens values one after another, with the scratch of its walk kept between them: a walk runs
 * to its end before the next starts, so one queue serves them all (two new arrays per entry would
 * be a large share of what a scan allocates). One per pass; never shared between threads.
 */
export class Lightener {
  /** The refs of the value being lightened (a field, not a closure per node). */
  private refs: readonly LiteralRef[] | undefined = undefined;
  /** JSON characters the last `lightChild` counted (a field, not an object per node). */
  private childChars = 0;
  /** Containers still to visit, and (parallel) what each lies inside (IN_CALL_ARGS, IN_USER): a walk pops what it pushes. */
  private readonly nodes: unknown[] = [];
  private readonly modes: number[] = [];
  /** Keys repeat endlessly ("type", "text", …): their lengths are remembered, a few hundred at most. */
  private readonly keyLengths = new Map<string, number>();

  /**
   * Lightens, in place, every long string inside a freshly parsed value the caller owns, and
   * returns `JSON.stringify(value).length` of the value as it was, counted on the way (a parsed
   * value holds only objects, arrays, strings, finite numbers, booleans and null, so every node adds
   * its own characters whatever the visiting order). Object keys are never touched. Iterative:
   * parsed JSON may nest deeper than the call stack. `skipKey`: a key of the top-level object whose
   * value is neither visited nor counted (one the caller lightened already).
   */
  lighten(value: unknown, refs?: readonly LiteralRef[], skipKey?: string): number {
    this.refs = refs;
    try {
      return this.walk(value, skipKey);
    } finally {
      this.refs = undefined;
    }
  }

  private walk(value: unknown, skipKey: string | undefined): number {
    const { nodes, modes } = this;
    // Empty unless an earlier walk threw halfway.
    nodes.length = 0;
    modes.length = 0;
    this.lightChild(value, NEVER, 0);
    let length = this.childChars;
    const top = nodes.length === 1 ? nodes[0] : undefined;
    while (nodes.length > 0) {
      const node = nodes.pop();
      const skip = node === top ? skipKey : undefined;
      let mode = modes.pop()!;
      const args = (mode & IN_CALL_ARGS) !== 0;
      // Where the next child starts in the arguments' JSON, while that is known (see argsRule).
      let at = (mode & ARGS_ROOT) !== 0 ? 1 : UNKNOWN_AT;
      mode &= ~ARGS_ROOT;
      if (Array.isArray(node)) {
        length += node.length > 0 ? node.length + 1 : 2; // brackets and commas
        for (let i = 0; i < node.length; i++) {
          if (i > 0) at = advance(at, 1); // the comma
          node[i] = this.lightChild(node[i], args ? argsRule(IN_ARGS, at) : NEVER, mode);
          length += this.childChars;
          at = nextAt(at, node[i], this.childChars);
        }
      } else {
        const record = node as Record<string, unknown>;
        // Always computed, never skipped: a branch first taken after V8 optimised this walk (at a
        // shard's first user message) would make every worker compile it again.
        mode |= record.role === "user" ? IN_USER : 0;
        const bulk = (mode & IN_USER) !== 0 ? USER_BULK : BULK;
        const subtreeKeys = record.role === "toolResult" ? TOOL_RESULT_SUBTREE_KEYS : SUBTREE_KEYS;
        let keys = 0;
        // for-in, not Object.keys: no array per object (parsed JSON has no inherited keys).
        for (const key in record) {
          if (key === skip) continue;
          const child = record[key];
          // Never inside a call's arguments: a retry body quotes their first 200 JSON characters.
          const chars = !args && subtreeKeys.has(key) && typeof child === "object" && child !== null ? this.subtreeJsonLength(child) : 0;
          // Only when the placeholder is shorter than what it replaces (it needs ~8 characters).
          if (chars > MIN_SUBTREE_CHARS) {
            record[key] = placeholderWorth(chars - 2); // the 2 quotes of the string that replaces it
            length += this.keyJsonLength(key) + 1 + chars;
            keys++;
            continue;
          }
          const argsRoot = !args && ARGS_KEYS.has(key);
          if (args) at = advance(at, (keys > 0 ? 1 : 0) + this.keyJsonLength(key) + 1); // comma, key, colon
          const rule = args ? argsRule(key === "path" ? PATH : IN_ARGS, at) : argsRoot ? IN_ARGS : BULK_KEYS.has(key) ? (key === "data" && record.type === "image" ? IMAGE_DATA : bulk) : NEVER;
          record[key] = this.lightChild(record[key], rule, args ? mode : argsRoot ? mode | IN_CALL_ARGS | ARGS_ROOT : mode);
          length += this.keyJsonLength(key) + 1 + this.childChars;
          if (args) at = nextAt(at, record[key], this.childChars);
          keys++;
        }
        length += keys > 0 ? keys + 1 : 2; // braces and commas
      }
    }
    return length;
  }

  /**
   * A child lightened (a string, by `rule`) or queued (a container, counted when visited); sets
   * `childChars` to the JSON characters it adds by itself.
   */
  private lightChild(child: unknown, rule: Rule, mode: number): unknown {
    if (typeof child === "string") {
      const ref = this.refs === undefined ? undefined : refOf(child, this.refs);
      if (ref !== undefined) {
        this.childChars = ref.jsonLength;
        return lightRef(ref, rule);
      }
      const chars = jsonStringLength(child);
      this.childChars = chars;
      return child.length > rule.max ? lightString(child, rule.max, rule.keep, chars) : child;
    }
    if (typeof child === "object" && child !== null) {
      this.nodes.push(child);
      this.modes.push(mode);
      this.childChars = 0;
      return child;
    }
    this.childChars = child === null || child === undefined ? 4 : String(child).length;
    return child;
  }

  /** JSON length of a whole subtree about to become one placeholder, refs counted at their real length. */
  private subtreeJsonLength(child: object): number {
    const json = jsonText(child);
    return this.refs === undefined ? json.length : resolvedJsonLength(json, this.refs);
  }

  private keyJsonLength(key: string): number {
    let length = this.keyLengths.get(key);
    if (length === undefined) {
      length = jsonStringLength(key);
      if (this.keyLengths.size < KEY_LENGTHS_MAX) this.keyLengths.set(key, length);
    }
    return length;
  }
}

/**
 * What lightString gives for the ref's string, decoding only its head (all of it only when it
 * stays whole): the same checks, on the ref's length.
 */
function lightRef(ref: LiteralRef, rule: Rule): string {
  if (ref.units <= rule.max) return refText(ref);
  if (rule.keep === 0) return placeholderWorth(ref.jsonLength - jsonStringLength(""));
  let prefix = refPrefix(ref, rule.keep + PLACEHOLDER_MAX_CHARS + 1);
  // Leading whitespace is kept on top of the head: read on until the prefix has more than that.
  while (prefix.trimStart() === "" && prefix.length < ref.units) prefix = refPrefix(ref, prefix.length * 2);
  const lead = prefix.length - prefix.trimStart().length;
  if (lead + rule.keep + PLACEHOLDER_MAX_CHARS >= ref.units) return refText(ref);
  if (prefix.length < lead + rule.keep) prefix = refPrefix(ref, lead + rule.keep);
  const head = prefix.slice(0, lead + rule.keep);
  return `${head}${placeholderWorth(ref.jsonLength - jsonStringLength(head))}`;
}

/**
 * Marks a value built from lightened records: serialising it throws instead of writing
 * placeholders where data belongs. Writers must use the worker's faithful JSON instead.
 */
export function guardLightened<T extends object>(value: T): T {
  Object.defineProperty(value, "toJSON", {
    enumerable: false,
    value: () => {
      throw new Error("internal error: lightened records must not be serialised (use the worker's JSON)");
    },
  });
  return value;
}
