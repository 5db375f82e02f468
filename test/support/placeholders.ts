// What the README's transcripts show in place of what differs between two runs of the same tour, and
// back: the README talks to 127.0.0.1:3000 and :3001 where the test's servers listen on port 0, a
// `$skiptoken` is signed with a key made for each store (lib/query/token.ts), ids the server chooses
// hold the time and random bits (lib/ids.ts), and so on. Only those are replaced; every other byte is
// compared as sent. The README's tour intro lists the same placeholders for its readers.

/** 48 bits of time then 80 random bits in lowercase Crockford base32: 26 characters (lib/ids.ts). */
const SERVER_ID = /(?<![0-9A-Za-z])[0-9a-hjkmnp-tv-z]{26}(?![0-9A-Za-z])/g;
/** `$skiptoken=` payload `.` MAC, both base64url (lib/query/token.ts). */
const SKIPTOKEN = /(\$skiptoken=)([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)/g;
/** Times in bodies (receivedAt, occurredAt): ISO 8601 in UTC as Date#toISOString writes them. */
const TIME = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z/g;
const TOKEN_PLACEHOLDER = '<token>';
/** Headers whose whole value varies: the clock (RFC 9110 §6.6.1, §8.8.2) and the per-process request id prefix. */
const VARYING_HEADERS: ReadonlyMap<string, string> = new Map([
  ['date', '<date>'],
  ['last-modified', '<date>'],
  ['x-request-id', '<request-id>'],
]);

export interface Endpoint {
  /** `127.0.0.1:3000`, as the README writes it. */
  readonly shown: string;
  /** `127.0.0.1:41234`, where the test's server listens. */
  readonly real: string;
}

export class Placeholders {
  private readonly endpoints: readonly Endpoint[];
  private readonly secrets: ReadonlyMap<string, string>;
  /** Real value → placeholder, numbered by first sight over the whole tour, so a later step that shows the same id shows the same name. */
  private readonly numbered = new Map<string, string>();
  private readonly counts = new Map<string, number>();
  private latestToken: string | undefined;

  /** `secrets` maps a placeholder the README shows (`<SIGNING_SECRET>`) to the value the test's servers use. */
  constructor(endpoints: readonly Endpoint[], secrets: ReadonlyMap<string, string>) {
    this.endpoints = endpoints;
    this.secrets = secrets;
  }

  /** What the README shows for the printed output of one command. */
  fromServer(printed: string): string {
    for (const secret of this.secrets.values()) {
      // A secret is write-only (CONVENTIONS.md#subscriptions): an answer that holds one is a leak, not a drift.
      if (printed.includes(secret)) throw new Error('the server printed a signing secret');
    }
    if (!printed.startsWith('HTTP/')) return this.text(printed);
    const split = printed.indexOf('\n\n');
    const head = split === -1 ? printed : printed.slice(0, split);
    const body = split === -1 ? '' : printed.slice(split + 2);
    const shownBody = this.text(body);
    const bodyVaries = shownBody !== body;
    const [status, ...fields] = head.split('\n');
    const shownFields = fields.map((field) => {
      const colon = field.indexOf(': ');
      const name = field.slice(0, colon);
      const value = field.slice(colon + 2);
      const lower = name.toLowerCase();
      const fixed = VARYING_HEADERS.get(lower);
      if (fixed !== undefined) return `${name}: ${fixed}`;
      // An ETag is a hash of the body's bytes (README, ETags): it varies exactly when they do.
      if (lower === 'etag' && bodyVaries) return `${name}: "${this.number('etag', value.replace(/^"|"$/g, ''))}"`;
      if (lower === 'content-length' && bodyVaries) {
        if (Number(value) !== Buffer.byteLength(body)) throw new Error(`Content-Length ${value} but the body has ${Buffer.byteLength(body)} bytes`);
        return `${name}: ${Buffer.byteLength(shownBody)}`;
      }
      return `${name}: ${this.text(value)}`;
    });
    return `${[status, ...shownFields].join('\n')}${split === -1 ? '' : `\n\n${shownBody}`}`;
  }

  /** A command word as the test's servers need it: real ports, secrets, ids, and the `$skiptoken` of the latest `@nextLink`. */
  toServer(word: string): string {
    let real = word;
    for (const { shown, real: actual } of this.endpoints) real = replaceHost(real, shown, actual);
    for (const [placeholder, secret] of this.secrets) real = real.split(placeholder).join(secret);
    for (const [value, placeholder] of this.numbered) real = real.split(placeholder).join(value);
    if (real.includes(TOKEN_PLACEHOLDER)) {
      // The README follows the link the previous page gave; so does the test, with its real token.
      if (this.latestToken === undefined) throw new Error(`${TOKEN_PLACEHOLDER} used before any response carried a $skiptoken`);
      real = real.split(TOKEN_PLACEHOLDER).join(this.latestToken);
    }
    return real;
  }

  private text(text: string): string {
    let shown = text;
    for (const { shown: name, real } of this.endpoints) shown = replaceHost(shown, real, name);
    shown = shown.replace(SKIPTOKEN, (_whole: string, prefix: string, token: string) => {
      this.latestToken = token;
      return `${prefix}${TOKEN_PLACEHOLDER}`;
    });
    shown = shown.replace(TIME, '<time>');
    return shown.replace(SERVER_ID, (id) => this.number('id', id));
  }

  private number(kind: string, value: string): string {
    let placeholder = this.numbered.get(value);
    if (placeholder === undefined) {
      const count = (this.counts.get(kind) ?? 0) + 1;
      this.counts.set(kind, count);
      placeholder = `<${kind}-${count}>`;
      this.numbered.set(value, placeholder);
    }
    return placeholder;
  }
}

/** `127.0.0.1:4123` must not match the start of `127.0.0.1:41234`. */
function replaceHost(text: string, from: string, to: string): string {
  return text.replace(new RegExp(`${from.replace(/[.]/g, '\\.')}(?![0-9])`, 'g'), to);
}
