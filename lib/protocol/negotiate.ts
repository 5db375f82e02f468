// Proactive negotiation of the response media type: RFC 9110 §12.5.1 (Accept) and §12.4.2 (quality
// values). CONVENTIONS.md#content-negotiation: application/json by default (also for `*/*` and no
// Accept), text/csv and text/html where offered; nothing acceptable → the caller answers 406.
//
//   Accept     = #( media-range [ weight ] )
//   media-range = ( "*/*" / ( type "/" "*" ) / ( type "/" subtype ) ) parameters
//   weight     = OWS ";" OWS "q=" qvalue
//   qvalue     = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )
//
// Parameters after the weight (RFC 7231's accept-ext, dropped from RFC 9110's grammar) are ignored.
// Note: this deviates from a strict reading in one place: a field whose members are all malformed
// (or empty) is treated like an absent Accept, which §12.5.1 permits ("disregard the header field").
import type { MediaParameter, MediaType } from './content-type.js';
import { parseMediaType, readMediaType } from './content-type.js';
import { COMMA, skipOws, skipToListEnd } from './field-syntax.js';

const FULL_STOP = 0x2e;
const DIGIT_0 = 0x30;
const DIGIT_1 = 0x31;
const DIGIT_9 = 0x39;
const WILDCARD = '*';
// "0" or "1", then optionally "." and up to three digits.
const QVALUE_MAX_LENGTH = 5;

/** One well-formed member of an Accept field, in the client's order. */
interface MediaRange {
  readonly type: string;
  readonly subtype: string;
  readonly parameters: readonly MediaParameter[];
  readonly q: number;
  readonly order: number;
}

/** How specific a matching range is: exact type beats `type/*` beats `*\/*`; then more parameters win. */
interface Specificity {
  readonly level: number;
  readonly parameterCount: number;
}

interface Candidate {
  readonly index: number;
  readonly q: number;
  readonly order: number;
}

/**
 * Picks the best of `offered` (e.g. ['application/json', 'text/csv']) for an Accept field value.
 * No Accept (undefined or empty string) → offered[0]. Ranges `*\/*`, `type/*`, exact types; parameters
 * on ranges are matched if present; q=0 excludes; most specific matching range decides a type's
 * quality (RFC 9110 §12.5.1); ties broken by the client's order, then by the order of `offered`.
 * Malformed members are ignored (never throw). Returns undefined when nothing acceptable (→ the
 * caller answers 406). Media type comparison is case-insensitive.
 */
export function chooseMediaType(accept: string | undefined, offered: readonly string[]): string | undefined {
  return new MediaOffer(offered).choose(accept);
}

/** Accept values whose choice a MediaOffer remembers: clients send a handful of them, a stranger cannot grow it. */
const REMEMBERED_ACCEPTS = 32;

/** The representations a resource offers, parsed once, chosen among for each request's Accept. */
export class MediaOffer {
  private readonly types: readonly MediaType[];
  /** Recent Accept values and their choice (null: none acceptable), so a repeated value is not parsed again. */
  private readonly chosen = new Map<string, string | null>();

  constructor(private readonly offered: readonly string[]) {
    if (!Array.isArray(offered)) throw new TypeError('chooseMediaType: offered must be an array of media types');
    this.types = offered.map((value, index) => {
      const type = typeof value === 'string' ? parseMediaType(value) : undefined;
      if (type === undefined || type.type === WILDCARD || type.subtype === WILDCARD) {
        throw new TypeError(`chooseMediaType: offered[${index}] is not a concrete media type`);
      }
      return type;
    });
  }

  /** The best offered type for `accept` (see chooseMediaType), or undefined for a 406. */
  choose(accept: string | undefined): string | undefined {
    if (accept !== undefined && typeof accept !== 'string') {
      throw new TypeError('chooseMediaType: accept must be a string or undefined');
    }
    if (accept === undefined) return this.offered[0];
    const remembered = this.chosen.get(accept);
    if (remembered !== undefined) return remembered ?? undefined;
    const choice = this.decide(accept);
    if (this.chosen.size >= REMEMBERED_ACCEPTS) this.chosen.clear();
    this.chosen.set(accept, choice ?? null);
    return choice;
  }

  private decide(accept: string): string | undefined {
    const ranges = parseAccept(accept);
    if (ranges.length === 0) return this.offered[0];
    let best: Candidate | undefined;
    this.types.forEach((type, index) => {
      const range = decidingRange(ranges, type.type, type.subtype, type.parameters);
      if (range === undefined || range.q === 0) return;
      // Offered types are visited in order, so only a strictly better one replaces the current best.
      if (best === undefined || range.q > best.q || (range.q === best.q && range.order < best.order)) {
        best = { index, q: range.q, order: range.order };
      }
    });
    return best === undefined ? undefined : this.offered[best.index];
  }
}

// §12.5.1: "Media ranges can be overridden by more specific media ranges or specific media types.
// If more than one media range applies to a given type, the most specific reference has precedence."
// Among equally specific ranges the one the client listed first decides.
function decidingRange(
  ranges: readonly MediaRange[],
  type: string,
  subtype: string,
  parameters: ReadonlyMap<string, string>,
): MediaRange | undefined {
  let decider: MediaRange | undefined;
  let deciderSpecificity: Specificity | undefined;
  for (const range of ranges) {
    const specificity = matchRange(range, type, subtype, parameters);
    if (specificity === undefined) continue;
    if (deciderSpecificity === undefined || isMoreSpecific(specificity, deciderSpecificity)) {
      decider = range;
      deciderSpecificity = specificity;
    }
  }
  return decider;
}

function matchRange(
  range: MediaRange,
  type: string,
  subtype: string,
  parameters: ReadonlyMap<string, string>,
): Specificity | undefined {
  let level: number;
  if (range.type === WILDCARD) level = 0;
  else if (range.type !== type) return undefined;
  else if (range.subtype === WILDCARD) level = 1;
  else if (range.subtype !== subtype) return undefined;
  else level = 2;
  // Every parameter the client named must be on the offered type. Values compare case-insensitively:
  // the registered parameters that matter here (charset, header) are case-insensitive.
  for (const { name, value } of range.parameters) {
    const offeredValue = parameters.get(name);
    if (offeredValue === undefined || offeredValue.toLowerCase() !== value.toLowerCase()) return undefined;
  }
  return { level, parameterCount: range.parameters.length };
}

function isMoreSpecific(a: Specificity, b: Specificity): boolean {
  return a.level !== b.level ? a.level > b.level : a.parameterCount > b.parameterCount;
}

function parseAccept(text: string): MediaRange[] {
  const ranges: MediaRange[] = [];
  let i = 0;
  while (i < text.length) {
    i = skipOws(text, i);
    if (i >= text.length) break;
    // §5.6.1.2: empty list elements ("a, , b") are allowed and do not count.
    if (text.charCodeAt(i) === COMMA) {
      i++;
      continue;
    }
    const member = readRange(text, i, ranges.length);
    const end = member === undefined ? i : skipOws(text, member.end);
    if (member !== undefined && (end === text.length || text.charCodeAt(end) === COMMA)) {
      ranges.push(member.range);
      i = end;
    } else {
      i = skipToListEnd(text, i);
    }
  }
  return ranges;
}

function readRange(text: string, start: number, order: number): { range: MediaRange; end: number } | undefined {
  const syntax = readMediaType(text, start);
  if (syntax === undefined) return undefined;
  // `*/html` is no range: a wildcard type needs a wildcard subtype.
  if (syntax.type === WILDCARD && syntax.subtype !== WILDCARD) return undefined;
  // §12.5.1: the first "q" parameter (case-insensitive, §12.4.2) separates the range's own parameters
  // from the weight; the media type registry forbids a parameter named "q" for this reason.
  const weightIndex = syntax.parameters.findIndex((parameter) => parameter.name === 'q');
  const weight = weightIndex === -1 ? undefined : syntax.parameters[weightIndex];
  const q = weight === undefined ? 1 : parseQValue(weight.value);
  if (q === undefined) return undefined;
  const parameters = weightIndex === -1 ? syntax.parameters : syntax.parameters.slice(0, weightIndex);
  return { range: { type: syntax.type, subtype: syntax.subtype, parameters, q, order }, end: syntax.end };
}

// qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )                  (§12.4.2)
// A quoted value ("0.5") is accepted too, as it arrives already unquoted; that is lenient only.
function parseQValue(value: string): number | undefined {
  if (value.length === 0 || value.length > QVALUE_MAX_LENGTH) return undefined;
  const first = value.charCodeAt(0);
  if (first !== DIGIT_0 && first !== DIGIT_1) return undefined;
  if (value.length > 1 && value.charCodeAt(1) !== FULL_STOP) return undefined;
  for (let i = 2; i < value.length; i++) {
    const code = value.charCodeAt(i);
    const allowed = first === DIGIT_1 ? code === DIGIT_0 : code >= DIGIT_0 && code <= DIGIT_9;
    if (!allowed) return undefined;
  }
  return Number(value);
}
