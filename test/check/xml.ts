// A minimal XML reader for the checker's tests of `--junit`: enough of XML 1.0 to refuse what a CI's
// JUnit reader would refuse (unbalanced or crossed tags, a raw `<` or `&` in text or an attribute, an
// unknown entity, an attribute without quotes, a character XML cannot carry, two roots) and to read
// back elements, attributes and text. No DTDs, comments, CDATA or processing instructions but the
// declaration: the report writes none.

export interface XmlElement {
  readonly name: string;
  readonly attributes: Readonly<Record<string, string>>;
  readonly children: XmlElement[];
  /** The element's own text, entities decoded. */
  text: string;
}

const NAME = '[A-Za-z_][A-Za-z0-9_.:-]*';
const TAG = new RegExp(`^<(/?)(${NAME})((?:\\s+${NAME}\\s*=\\s*"[^"]*")*)\\s*(/?)>`);
const ATTRIBUTE = new RegExp(`(${NAME})\\s*=\\s*"([^"]*)"`, 'g');
const BAD_AMPERSAND = /&(?!(?:amp|lt|gt|quot|apos|#[0-9]+|#x[0-9A-Fa-f]+);)/;
const NOT_XML = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;
const ENTITIES: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** The document's root element; throws an Error saying where the text is not well-formed XML. */
export function parseXml(source: string): XmlElement {
  if (NOT_XML.test(source)) throw new Error('a character XML 1.0 cannot carry');
  let at = 0;
  const declaration = /^<\?xml [^?]*\?>\s*/.exec(source);
  if (declaration !== null) at = declaration[0].length;
  const stack: XmlElement[] = [];
  let root: XmlElement | undefined;
  while (at < source.length) {
    const next = source.indexOf('<', at);
    const text = source.slice(at, next === -1 ? source.length : next);
    if (text.trim() !== '') {
      const parent = stack.at(-1);
      if (parent === undefined) throw new Error(`text outside the root element at ${at}`);
      parent.text += decode(text, at);
    }
    if (next === -1) break;
    const match = TAG.exec(source.slice(next));
    if (match === null) throw new Error(`not a tag at ${next}: ${source.slice(next, next + 40)}`);
    const [whole, closing, name, attributeText, selfClosing] = match as unknown as [string, string, string, string, string];
    if (closing === '/') {
      const open = stack.pop();
      if (open?.name !== name) throw new Error(`</${name}> at ${next} closes <${open?.name ?? 'nothing'}>`);
    } else {
      const attributes: Record<string, string> = {};
      for (const [, key, value] of attributeText.matchAll(ATTRIBUTE)) {
        if ((key as string) in attributes) throw new Error(`attribute ${String(key)} twice at ${next}`);
        if ((value as string).includes('<')) throw new Error(`a raw < in an attribute at ${next}`);
        attributes[key as string] = decode(value as string, next);
      }
      const element: XmlElement = { name, attributes, children: [], text: '' };
      const parent = stack.at(-1);
      if (parent === undefined) {
        if (root !== undefined) throw new Error(`a second root element <${name}> at ${next}`);
        root = element;
      } else {
        parent.children.push(element);
      }
      if (selfClosing !== '/') stack.push(element);
    }
    at = next + whole.length;
  }
  if (stack.length > 0) throw new Error(`<${stack.map((element) => element.name).join('><')}> never closed`);
  if (root === undefined) throw new Error('no root element');
  return root;
}

/** Every element named `name` under `element`, at any depth. */
export function elementsNamed(element: XmlElement, name: string): XmlElement[] {
  return element.children.flatMap((child) => [...(child.name === name ? [child] : []), ...elementsNamed(child, name)]);
}

function decode(text: string, at: number): string {
  if (BAD_AMPERSAND.test(text)) throw new Error(`a raw & or an unknown entity near ${at}`);
  return text.replace(/&(#x[0-9A-Fa-f]+|#[0-9]+|[a-z]+);/g, (_, entity: string) => {
    if (entity.startsWith('#x')) return String.fromCodePoint(parseInt(entity.slice(2), 16));
    if (entity.startsWith('#')) return String.fromCodePoint(Number(entity.slice(1)));
    return ENTITIES[entity] as string;
  });
}
