// The subset of curl the README's transcripts use, carried out with node:http and printed as `curl -i`
// prints it, so the README test needs no curl on the machine that runs it. Each option behaves as curl's
// manual (curl.se/docs/manpage.html) describes it; an option outside the subset throws, so a transcript
// can never be replayed by something that reads it differently from curl.
import { request, type Agent } from 'node:http';

export interface CurlRequest {
  readonly method: string;
  readonly url: URL;
  /** In the order curl sends them; names as written. */
  readonly headers: ReadonlyArray<readonly [string, string]>;
  readonly body: Buffer | undefined;
  /** `-i`: the status line and headers are printed before the body. */
  readonly include: boolean;
}

/** What curl sends unless `-H` replaces it. The User-Agent says who this is; the server ignores it. */
const DEFAULT_HEADERS: ReadonlyArray<readonly [string, string]> = [
  ['User-Agent', 'curl (resapi README tour)'],
  ['Accept', '*/*'],
];
/** curl's type for `-d`, `--data-binary` and `--data-urlencode` unless `-H` names another. */
const FORM = 'application/x-www-form-urlencoded';

/**
 * Reads curl's arguments (without the leading `curl`). `readFile` resolves `@file` the way curl does,
 * relative to the directory the command runs in.
 */
export function parseCurl(args: readonly string[], readFile: (name: string) => Buffer): CurlRequest {
  let method: string | undefined;
  let url: string | undefined;
  let include = false;
  let get = false;
  const headers: Array<[string, string]> = [];
  const data: Buffer[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    const value = (): string => {
      const next = args[++i];
      if (next === undefined) throw new SyntaxError(`curl: ${arg} needs a value`);
      return next;
    };
    if (/^-[a-zA-Z]{2,}$/.test(arg)) {
      // Short flags that take no value may be grouped (`-si`); a grouped flag that needs one may not.
      for (const flag of arg.slice(1)) {
        if (flag === 'i') include = true;
        else if (flag === 's') continue;
        else if (flag === 'G') get = true;
        else throw new SyntaxError(`curl: -${flag} cannot be grouped in ${arg} here`);
      }
    } else if (arg === '-i' || arg === '--include') include = true;
    else if (arg === '-s' || arg === '--silent') continue; // curl prints no progress meter into a pipe anyway
    else if (arg === '-G' || arg === '--get') get = true;
    else if (arg === '-X' || arg === '--request') method = value();
    else if (arg === '-H' || arg === '--header') headers.push(header(value()));
    else if (arg === '-d' || arg === '--data') {
      // -d @file drops carriage returns and newlines from the file; inline text is sent as written.
      const text = value();
      data.push(text.startsWith('@') ? Buffer.from(readFile(text.slice(1)).toString('latin1').replace(/[\r\n]/g, ''), 'latin1') : Buffer.from(text));
    } else if (arg === '--data-binary') {
      const text = value();
      data.push(text.startsWith('@') ? readFile(text.slice(1)) : Buffer.from(text));
    } else if (arg === '--data-urlencode') data.push(Buffer.from(urlencodeArgument(value())));
    else if (arg.startsWith('-')) throw new SyntaxError(`curl: the README tour does not replay ${arg}`);
    else if (url === undefined) url = arg;
    else throw new SyntaxError(`curl: a second URL ${arg}`);
  }
  if (url === undefined) throw new SyntaxError('curl: no URL');
  const target = new URL(url);
  if (target.protocol !== 'http:' || target.hostname !== '127.0.0.1') throw new RangeError(`curl: the tour only talks to http://127.0.0.1, not ${url}`);
  // Several data options are joined with `&`, as for a form.
  const joined = data.length === 0 ? undefined : Buffer.concat(data.flatMap((chunk, index) => (index === 0 ? [chunk] : [Buffer.from('&'), chunk])));
  if (get && joined !== undefined) {
    // -G: the data goes into the query string and the request has no body.
    target.search = target.search === '' ? `?${joined.toString('latin1')}` : `${target.search}&${joined.toString('latin1')}`;
  }
  const body = get ? undefined : joined;
  const sent: Array<readonly [string, string]> = [['Host', target.host], ...DEFAULT_HEADERS.filter(([name]) => !named(headers, name))];
  sent.push(...headers);
  if (body !== undefined && !named(headers, 'Content-Type')) sent.push(['Content-Type', FORM]);
  return { method: method ?? (body !== undefined ? 'POST' : 'GET'), url: target, headers: sent, body, include };
}

/**
 * Sends the request and returns what `curl -i` prints: `HTTP/1.1 200 OK`, the headers in the order and
 * spelling the server sent (rawHeaders), a blank line, the body. Lines end in LF here, where curl writes
 * the header section with CRLF: a terminal shows both alike.
 */
export function perform(curl: CurlRequest, agent: Agent): Promise<string> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = {};
    for (const [name, value] of curl.headers) headers[name] = value;
    if (curl.body !== undefined) headers['Content-Length'] = String(curl.body.length);
    const outgoing = request({ host: curl.url.hostname, port: curl.url.port, path: `${curl.url.pathname}${curl.url.search}`, method: curl.method, headers, agent, setHost: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        if (!curl.include) return resolve(body);
        let head = `HTTP/${response.httpVersion} ${response.statusCode} ${response.statusMessage}\n`;
        for (let i = 0; i < response.rawHeaders.length; i += 2) head += `${response.rawHeaders[i]}: ${response.rawHeaders[i + 1]}\n`;
        resolve(`${head}\n${body}`);
      });
    });
    outgoing.on('error', reject);
    outgoing.end(curl.body);
  });
}

/** curl's `-H 'Name: value'`; the forms that remove a header (`Name:`) or send it empty (`Name;`) are not used. */
function header(line: string): [string, string] {
  const colon = line.indexOf(':');
  const value = colon === -1 ? '' : line.slice(colon + 1).trim();
  if (colon <= 0 || value === '') throw new SyntaxError(`curl: the tour sends headers as "Name: value", not ${JSON.stringify(line)}`);
  return [line.slice(0, colon), value];
}

function named(headers: ReadonlyArray<readonly [string, string]>, name: string): boolean {
  return headers.some(([candidate]) => candidate.toLowerCase() === name.toLowerCase());
}

/**
 * `--data-urlencode name=content` sends `name=` then the content percent-encoded; without a name, only
 * the content. curl encodes every byte but A-Z a-z 0-9 - . _ ~ (a space is %20). The `@file` forms are not used.
 */
function urlencodeArgument(argument: string): string {
  const equals = argument.indexOf('=');
  const name = equals === -1 ? '' : argument.slice(0, equals);
  if (name.includes('@')) throw new SyntaxError(`curl: the tour does not replay --data-urlencode ${argument}`);
  const content = equals === -1 ? argument : argument.slice(equals + 1);
  let encoded = '';
  for (const byte of Buffer.from(content, 'utf8')) {
    const char = String.fromCharCode(byte);
    encoded += /[A-Za-z0-9._~-]/.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  // `=content` sends the content alone, like a bare `content`.
  return name === '' ? encoded : `${name}=${encoded}`;
}
