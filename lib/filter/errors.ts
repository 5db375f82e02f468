// Errors of the `$filter` stages (CONVENTIONS.md#filter-errors-and-budget: a syntax error is a 400
// whose problem names the character offset). Errors are values, never thrown: every stage returns
// either its result or one FilterError, and the HTTP layer maps `kind` to a problem. The message always
// ends with "at offset N" so a client reading only the text still learns where to look.

export type FilterErrorKind =
  | 'syntax'
  | 'unknown-function'
  | 'unknown-property'
  | 'too-long'
  | 'too-deep'
  | 'type';

export interface FilterError {
  readonly kind: FilterErrorKind;
  readonly message: string;
  /** 0-based character offset (UTF-16 code unit) into the input where the problem was detected. */
  readonly offset: number;
}

/** The one constructor of errors, so offset and message can never disagree. */
export function filterError(kind: FilterErrorKind, description: string, offset: number): FilterError {
  return { kind, message: `${description} at offset ${offset}`, offset };
}

const MAX_QUOTED = 24;

/** Quotes a piece of the input for a message, shortened and with control characters made visible. */
export function quote(text: string): string {
  const short = text.length > MAX_QUOTED ? `${text.slice(0, MAX_QUOTED)}…` : text;
  const escape = (ch: string): string => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`;
  const visible = short.replace(/[\u0000-\u001f\u007f]/gu, escape);
  return `'${visible}'`;
}
