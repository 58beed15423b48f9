// A small strict XML reader for tests: elements, attributes and text only (no comments, CDATA,
// doctype or processing instructions but an optional leading `<?xml …?>`). Anything else throws.

export interface XmlElement {
  name: string;
  attributes: Map<string, string>;
  children: XmlElement[];
  text: string;
}

const NAME = /^[A-Za-z_][\w.:-]*/;
const REFERENCE = /^&(?:amp|lt|gt|quot|apos|#[0-9]+|#x[0-9A-Fa-f]+);/;
const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };

/** The document's one root element; throws naming the offset of the first fault. */
export function parseStrictXml(source: string): XmlElement {
  let at = source.startsWith("<?xml") ? source.indexOf("?>") + 2 : 0;
  if (at === 1) fail(0, "unterminated XML declaration");
  const stack: XmlElement[] = [];
  let root: XmlElement | undefined;
  while (at < source.length) {
    const lt = source.indexOf("<", at);
    const textEnd = lt === -1 ? source.length : lt;
    const text = decodeText(source.slice(at, textEnd), at);
    if (stack.length > 0) stack[stack.length - 1]!.text += text;
    else if (text.trim() !== "") fail(at, "text outside the root element");
    if (lt === -1) break;
    if (source.startsWith("</", lt)) {
      const name = NAME.exec(source.slice(lt + 2))?.[0];
      const close = lt + 2 + (name?.length ?? 0);
      if (!name || source[close] !== ">") fail(lt, "malformed end tag");
      const open = stack.pop();
      if (!open || open.name !== name) fail(lt, `</${name}> does not close <${open?.name ?? "nothing"}>`);
      at = close + 1;
      continue;
    }
    const { element, end, selfClosing } = readStartTag(source, lt);
    if (stack.length > 0) stack[stack.length - 1]!.children.push(element);
    else if (root) fail(lt, "a second root element");
    else root = element;
    if (!selfClosing) stack.push(element);
    at = end;
  }
  if (stack.length > 0) fail(source.length, `<${stack[stack.length - 1]!.name}> is never closed`);
  if (!root) fail(0, "no root element");
  return root;
}

function readStartTag(source: string, lt: number): { element: XmlElement; end: number; selfClosing: boolean } {
  const name = NAME.exec(source.slice(lt + 1))?.[0];
  if (!name) fail(lt, "a '<' that starts no tag");
  const element: XmlElement = { name, attributes: new Map(), children: [], text: "" };
  let at = lt + 1 + name.length;
  for (;;) {
    const space = /^\s*/.exec(source.slice(at))![0].length;
    at += space;
    if (source.startsWith("/>", at)) return { element, end: at + 2, selfClosing: true };
    if (source[at] === ">") return { element, end: at + 1, selfClosing: false };
    if (space === 0) fail(at, "attributes must be separated by white space");
    const attr = NAME.exec(source.slice(at))?.[0];
    if (!attr) fail(at, "malformed attribute name");
    at += attr.length;
    const quote = source[at + 1];
    if (source[at] !== "=" || (quote !== '"' && quote !== "'")) fail(at, `attribute ${attr} is not ="quoted"`);
    const close = source.indexOf(quote, at + 2);
    if (close === -1) fail(at, `attribute ${attr} is never closed`);
    const raw = source.slice(at + 2, close);
    if (raw.includes("<")) fail(at, `'<' in attribute ${attr}`);
    if (element.attributes.has(attr)) fail(at, `attribute ${attr} twice`);
    element.attributes.set(attr, decodeText(raw, at + 2));
    at = close + 1;
  }
}

/** Text with its references decoded; a bare '&' or '>' or a character XML forbids throws. */
function decodeText(raw: string, offset: number): string {
  let out = "";
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (c === ">") fail(offset + i, "unescaped '>'");
    if (/[\u0000-\u0008\u000B\u000C\u000E-\u001F]/.test(c)) fail(offset + i, "a control character XML cannot hold");
    if (c !== "&") {
      out += c;
      continue;
    }
    const ref = REFERENCE.exec(raw.slice(i))?.[0];
    if (!ref) fail(offset + i, "a bare '&'");
    const body = ref.slice(1, -1);
    out += body.startsWith("#x") ? String.fromCodePoint(parseInt(body.slice(2), 16))
      : body.startsWith("#") ? String.fromCodePoint(Number(body.slice(1))) : ENTITIES[body]!;
    i += ref.length - 1;
  }
  return out;
}

function fail(offset: number, message: string): never {
  throw new Error(`XML at offset ${offset}: ${message}`);
}

/** Every element of the tree, depth first. */
export function allElements(root: XmlElement): XmlElement[] {
  return [root, ...root.children.flatMap(allElements)];
}
