// Request target → route (CONVENTIONS.md#routes, CONVENTIONS.md#names). Pure: a Router knows
// only the path patterns of the route table (lib/routes.ts) and the path it is asked about (the
// matches it remembers change nothing it answers).
//
// A pattern is "/" or a sequence of segments, each a literal (`$bulk`, `webhooks`) or a parameter in
// braces whose name picks the rule that validates it (PARAM_RULES). The path is split on "/" before
// percent-decoding, so an encoded "%2F" inside a segment is data, not a separator; literals compare
// with the decoded segment (so /%77ebhooks is /webhooks, RFC 3986 §6.2.2.2); a segment that starts
// with "$" is a system segment and never fills a parameter (CONVENTIONS.md#names); dot-segments are refused
// rather than resolved (RFC 3986 §5.2.4 would let "/a/../b" reach another resource). When several
// patterns fit a path, the one with the most literal segments wins, whatever the declaration order.
import { inboxItemIdProblem, isCollectionName, isInboxItemId, isResourceId, MAX_EVENT_ID } from '../names.js';

export interface RoutePattern<N extends string> {
  readonly name: N;
  readonly path: string;
  /** Every longer path that starts with this one is reserved and unknown (the webhook path, CONVENTIONS.md#routes). */
  readonly reserveBelow?: boolean;
}

export type RouteMatch<N extends string, P extends RoutePattern<N> = RoutePattern<N>> =
  | { readonly kind: 'route'; readonly name: N; readonly route: P; readonly params: RouteParams }
  | { readonly kind: 'unknown' }
  | { readonly kind: 'invalid'; readonly detail: string };

/** The decoded parameters of a matched route. */
export class RouteParams {
  /** `names`: the pattern's parameters in path order; `values`: theirs in this path. */
  constructor(
    private readonly names: readonly string[],
    private readonly values: readonly string[],
  ) {}

  /** The parameter's decoded value; asking for one the pattern does not have is a programmer error. */
  get(name: string): string {
    const { names } = this;
    for (let index = 0; index < names.length; index++) if (names[index] === name) return this.values[index] as string;
    throw new TypeError(`RouteParams: the route has no parameter {${name}}`);
  }

  entries(): [string, string][] {
    return this.names.map((name, index) => [name, this.values[index] as string]);
  }
}

interface ParamRule {
  readonly valid: (value: string) => boolean;
  readonly detail: (shown: string, value: string) => string;
}

/**
 * How each parameter name is validated (CONVENTIONS.md#names; an event id is any well-formed text of
 * 1-255 code points, CONVENTIONS.md#inbox). Percent-decoding already refuses what is not UTF-8, so a
 * decoded segment never holds a lone surrogate; the event id rule says so again, as the receiver does.
 */
const PARAM_RULES: Readonly<Record<string, ParamRule>> = {
  collection: {
    valid: isCollectionName,
    detail: (shown) =>
      `'${shown}' is not a valid collection name: ` +
      `use 1-64 characters, a letter first, then letters, digits, '_' or '-'.`,
  },
  id: { valid: isResourceId, detail: invalidIdDetail },
  name: { valid: isResourceId, detail: invalidIdDetail },
  deliveryId: { valid: isResourceId, detail: invalidIdDetail },
  // An inbox item id: the event id, or `<source>:<eventId>` for a named source (CONVENTIONS.md#inbox).
  eventId: {
    valid: isInboxItemId,
    detail: (shown, value) =>
      `'${shown}' is not a valid event id: it ` +
      `${inboxItemIdProblem(value) ?? `must be 1-${MAX_EVENT_ID} code points`} ` +
      '(an event id is text, percent-encoded as UTF-8 in the path).',
  },
};

type Segment = { readonly literal: string } | { readonly param: string; readonly rule: ParamRule };

interface CompiledPattern<N extends string, P extends RoutePattern<N>> {
  readonly name: N;
  /** The pattern as declared. */
  readonly route: P;
  readonly segments: readonly Segment[];
  readonly literals: number;
  readonly reserveBelow: boolean;
  /** The names of its parameters, in path order. */
  readonly params: readonly string[];
}

const UNKNOWN = Object.freeze({ kind: 'unknown' as const });
/** A longer path is matched every time, so what is remembered stays small whatever is sent. */
const REMEMBERED_PATH_LENGTH = 256;
/**
 * Slots of the hashes of paths matched once (a power of two), in buckets of two: a path remembered on its
 * second sighting must not lose its slot to another path of its bucket seen in between, or two paths read
 * in turn would push each other out forever (a third of 256 paths did, in one slot each of 1,024).
 */
const SEEN_SLOTS = 8192;
/**
 * Paths whose matches a router remembers: past this many it forgets them all and starts again. As many
 * as the hashes of SEEN_SLOTS let in: with fewer (1,024 were), paths asked for again within 1,024 to 8,192
 * requests were admitted and then forgotten wholesale before their next request, each one copied and
 * matched every time (1.5 µs a match for 2,000 paths read in turn, where matching alone takes 0.23).
 * Full, it holds 3.3 MB of heap for short paths, 5 MB for paths of 256 characters refused as invalid.
 */
const REMEMBERED_PATHS = SEEN_SLOTS;

/**
 * Matches paths to the patterns it was given; a match names the pattern and gives it back as declared.
 * A match is a function of the path alone and never changes, so the matches of the paths asked for
 * lately are remembered: a path asked for again is not split, decoded and validated again.
 */
export class Router<N extends string, P extends RoutePattern<N> = RoutePattern<N>> {
  /** The patterns of each segment count, in declaration order (which breaks ties of literal segments). */
  private readonly bySize = new Map<number, readonly CompiledPattern<N, P>[]>();
  /** The patterns that reserve every longer path below them. */
  private readonly reserving: readonly CompiledPattern<N, P>[];
  private readonly remembered = new Map<string, RouteMatch<N, P>>();
  /**
   * Hashes of paths matched once, so only a path asked for a second time is remembered: paths that
   * come once each (reads spread over more items than are remembered) are matched and let go, instead
   * of filling the memory with matches kept just long enough to cost a collection of old garbage.
   */
  private readonly seen = new Int32Array(SEEN_SLOTS);

  constructor(patterns: readonly P[]) {
    const compiled = patterns.map((pattern) => compile<N, P>(pattern));
    for (const pattern of compiled) {
      const size = pattern.segments.length;
      this.bySize.set(size, [...(this.bySize.get(size) ?? []), pattern]);
    }
    this.reserving = compiled.filter((pattern) => pattern.reserveBelow);
  }

  match(path: string): RouteMatch<N, P> {
    if (path.length > REMEMBERED_PATH_LENGTH) return this.matchPath(path);
    const remembered = this.remembered.get(path);
    if (remembered !== undefined) return remembered;
    const hash = hashOf(path);
    // The bucket's two slots, the newer first: a path not in them takes the first, the older goes.
    const slot = hash & (SEEN_SLOTS - 2);
    if (this.seen[slot] !== hash && this.seen[slot + 1] !== hash) {
      this.seen[slot + 1] = this.seen[slot] as number;
      this.seen[slot] = hash;
      return this.matchPath(path);
    }
    if (this.remembered.size >= REMEMBERED_PATHS) this.remembered.clear();
    // Matched from a copy of its own, once: the path is a slice of the request target, whose query
    // may be long, and what is remembered would keep the whole target alive.
    const own = Buffer.from(path, 'utf16le').toString('utf16le');
    const match = this.matchPath(own);
    this.remembered.set(own, match);
    return match;
  }

  private matchPath(path: string): RouteMatch<N, P> {
    if (!path.startsWith('/')) return UNKNOWN;
    const raw = segmentsOf(path);
    for (const segment of raw) {
      if (segment === '') return UNKNOWN;
    }
    const decoded: string[] = [];
    for (const segment of raw) {
      const text = decodeSegment(segment);
      if (text === undefined) {
        return { kind: 'invalid', detail: `The path segment '${printable(segment)}' is not valid percent-encoding.` };
      }
      if (text === '.' || text === '..') {
        const detail = `The path segment '${printable(segment)}' is a dot-segment; resapi does not resolve them.`;
        return { kind: 'invalid', detail };
      }
      decoded.push(text);
    }
    // The most literal segments win, whatever the declaration order; the first declared among equals.
    let best: CompiledPattern<N, P> | undefined;
    for (const pattern of this.bySize.get(decoded.length) ?? []) {
      if ((best === undefined || pattern.literals > best.literals) && fits(pattern.segments, raw, decoded)) {
        best = pattern;
      }
    }
    // A reserved prefix (`/webhooks`) hides every path below it but one a longer literal route names
    // (a receiving source `/webhooks/stripe`, CONVENTIONS.md#receiving-sources).
    for (const pattern of this.reserving) {
      const below = decoded.length > pattern.segments.length && fits(pattern.segments, raw, decoded);
      if (below && (best === undefined || best.literals <= pattern.literals)) return UNKNOWN;
    }
    if (best === undefined) return UNKNOWN;
    const values: string[] = [];
    const { segments } = best;
    for (let index = 0; index < segments.length; index++) {
      const segment = segments[index] as Segment;
      if ('literal' in segment) continue;
      const value = decoded[index] as string;
      if (!segment.rule.valid(value)) return { kind: 'invalid', detail: segment.rule.detail(printable(value), value) };
      values.push(value);
    }
    return { kind: 'route', name: best.name, route: best.route, params: new RouteParams(best.params, values) };
  }
}

export interface ParsedTarget {
  readonly path: string;
  readonly query: string;
}

/** Splits an origin-form or absolute-form request target (RFC 9112 §3.2) into path and query. */
export function splitTarget(target: string): ParsedTarget {
  let rest = target;
  // Only the absolute-form has a scheme and authority to cut; the origin-form starts with "/".
  const scheme = rest.startsWith('/') ? null : /^https?:\/\/[^/?#]*/i.exec(rest);
  if (scheme !== null) rest = rest.slice(scheme[0].length);
  const hash = rest.indexOf('#');
  if (hash !== -1) rest = rest.slice(0, hash);
  const question = rest.indexOf('?');
  const path = question === -1 ? rest : rest.slice(0, question);
  // RFC 9110 §4.2.3: an empty path is "/".
  return { path: path === '' ? '/' : path, query: question === -1 ? '' : rest.slice(question + 1) };
}

function compile<N extends string, P extends RoutePattern<N>>(pattern: P): CompiledPattern<N, P> {
  const { name, path } = pattern;
  if (typeof path !== 'string' || !path.startsWith('/')) {
    throw new TypeError(`route ${name}: the path must start with "/"`);
  }
  const parts = path === '/' ? [] : path.slice(1).split('/');
  const segments = parts.map((part): Segment => {
    const param = /^\{([A-Za-z]+)\}$/.exec(part)?.[1];
    if (param === undefined) {
      if (part === '' || part.includes('{')) throw new TypeError(`route ${name}: bad segment '${part}' in ${path}`);
      return { literal: decodeSegment(part) ?? part };
    }
    const rule = PARAM_RULES[param];
    if (rule === undefined) throw new TypeError(`route ${name}: no rule for the parameter {${param}}`);
    return { param, rule };
  });
  if (pattern.reserveBelow === true && segments.some((segment) => !('literal' in segment))) {
    throw new TypeError(`route ${name}: only a literal path can reserve the paths below it`);
  }
  const literals = segments.filter((segment) => 'literal' in segment).length;
  const params = segments.flatMap((segment) => ('param' in segment ? [segment.param] : []));
  return { name, route: pattern, segments, literals, reserveBelow: pattern.reserveBelow === true, params };
}

/** FNV-1a over the UTF-16 code units of `text`: a slot for it among the paths seen. */
function hashOf(text: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) hash = Math.imul(hash ^ text.charCodeAt(index), 0x01000193);
  return hash;
}

/** The segments of a path that starts with "/", split on "/" before any decoding ("/" alone has none). */
function segmentsOf(path: string): string[] {
  const segments: string[] = [];
  if (path === '/') return segments;
  let start = 1;
  for (let slash = path.indexOf('/', start); slash !== -1; slash = path.indexOf('/', start)) {
    segments.push(path.slice(start, slash));
    start = slash + 1;
  }
  segments.push(path.slice(start));
  return segments;
}

/** Do the segments fit the pattern's prefix? A parameter never takes a system segment ("$..."). */
function fits(segments: readonly Segment[], raw: readonly string[], decoded: readonly string[]): boolean {
  for (let index = 0; index < segments.length; index++) {
    const segment = segments[index] as Segment;
    const differs = 'literal' in segment ? decoded[index] !== segment.literal : (raw[index] as string).startsWith('$');
    if (differs) return false;
  }
  return true;
}

function decodeSegment(segment: string): string | undefined {
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

function invalidIdDetail(shown: string): string {
  return `'${shown}' is not a valid resource id: use 1-128 characters of A-Z a-z 0-9 . _ ~ - (not '.' or '..').`;
}

/** At most 80 code points of a name, with control characters escaped, so a problem stays readable. */
function printable(text: string): string {
  // Clipping by code point keeps a surrogate pair whole: half of one would be a lone surrogate.
  const points = Array.from(text.length > 160 ? text.slice(0, 162) : text);
  const clipped = points.length > 80 ? `${points.slice(0, 80).join('')}…` : text;
  return JSON.stringify(clipped).slice(1, -1);
}
