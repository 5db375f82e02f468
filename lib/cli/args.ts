// Command-line arguments of `resapi serve`, `resapi sign` and `resapi check` (CONVENTIONS.md#command-line,
// CONVENTIONS.md#conformance-checker). Pure: argv in, options or a usage error out, so every flag is
// unit-tested without starting anything.
import { checksInOrder } from '../check/checks.js';
import { isDocumentUrl } from '../check/rules.js';
import { MAX_RUN_COLLECTION } from '../check/run.js';
import { unknownSelectors } from '../check/select.js';
import { WEBHOOK_SCHEMES, type WebhookScheme } from '../config.js';
import { isCollectionName } from '../names.js';

export interface ServeArgs {
  readonly host: string;
  readonly port: number;
  readonly dataDir: string;
  readonly baseUrl?: string;
  readonly config?: string;
  readonly memory: boolean;
  readonly noCacheMode: boolean;
  readonly seed?: string;
  readonly handlers?: string;
  /** Where every accepted webhook event is forwarded (CONVENTIONS.md#forwarding). */
  readonly forward?: string;
}

export interface CheckArgs {
  readonly baseUrl: string;
  readonly json: boolean;
  readonly webhookSecretEnv?: string;
  readonly webhookPath?: string;
  readonly webhookScheme?: WebhookScheme;
  readonly apiKeyEnv?: string;
  readonly only?: readonly string[];
  readonly skip?: readonly string[];
  /** `--header 'Name: value'`, in the order given. */
  readonly headers?: readonly (readonly [string, string])[];
  readonly collection?: string;
  readonly timeoutMs?: number;
  /** Where to write the JUnit XML report. */
  readonly junit?: string;
  /** Present (true) only when --verbose was given. */
  readonly verbose?: true;
  /** The URL of the conventions document as published; each rule's URL is this with `#anchor`. */
  readonly docsBase?: string;
}

export type ParsedArgs =
  | { readonly ok: true; readonly command: 'serve'; readonly serve: ServeArgs }
  | { readonly ok: true; readonly command: 'help'; /** the text to print */ readonly text: string }
  | { readonly ok: true; readonly command: 'version' }
  | {
      readonly ok: true;
      readonly command: 'sign';
      /** the environment variable holding the secret */
      readonly secretEnv: string;
    }
  | { readonly ok: true; readonly command: 'check'; readonly check: CheckArgs }
  | { readonly ok: false; readonly message: string };

const VALUE_FLAGS = new Set([
  '--host', '--port', '--data-dir', '--base-url', '--config', '--seed', '--handlers', '--forward',
]);
const BOOLEAN_FLAGS = new Set(['--memory', '--no-cache-mode']);
/** An absolute http(s) URL without query or fragment. */
const ABSOLUTE_HTTP_URL = /^https?:\/\/[^/?#\s]+(\/[^?#\s]*)?$/i;
const MAX_FORWARD_URL = 2048;
/** The name of an environment variable. */
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export const USAGE = `Usage:
  resapi serve [--host 127.0.0.1] [--port 3000] [--data-dir data/store] [--base-url URL]
               [--config FILE] [--memory] [--no-cache-mode] [--seed PATH] [--handlers FILE.mjs]
               [--forward URL]
  resapi serve --help        every serve flag, explained
  resapi sign --secret-env NAME < body.json
                             print the X-Signature of a webhook body, signed with the secret in $NAME
  resapi check BASE_URL [--json] [--junit FILE] [--only ID|SECTION,...] [--header 'Name: value']
                             grade a server against the conventions, one line per rule; exit 1 on a
                             failure, 2 when it cannot be reached (resapi check --help says more)
  resapi --help | --version

Environment:
  RESAPI_API_KEYS          comma-separated API keys; when set, requests need Authorization: Bearer <key>
  RESAPI_WEBHOOK_SECRETS   comma-separated webhook signing secrets (current first, previous second)`;

export const SERVE_HELP = `Usage: resapi serve [flags]

Serves the HTTP resource API until SIGTERM or SIGINT (then it finishes in-flight requests, up to 10 s,
flushes the store and exits 0).

Flags:
  --host HOST          address to listen on (default 127.0.0.1)
  --port N             port to listen on (default 3000); 0 picks a free port, and the first line on
                       stdout is then "listening on http://HOST:PORT"
  --data-dir DIR       where the durable store lives: journal, snapshot, lock (default data/store,
                       created when missing); one process per data dir
  --memory             keep everything in memory instead (nothing survives a restart)
  --seed PATH          load a folder of JSON files (one array per collection, named after the file) or
                       a json-server db.json into a store that holds nothing yet
  --config FILE        a JSON config file (cache policy, schemas, page sizes, webhook and outbox
                       settings); an unknown key or a wrong type refuses the start, naming the key
  --base-url URL       absolute base for the links the server writes (Location, @nextLink), e.g.
                       https://api.example.com; never taken from the request's Host
  --no-cache-mode      send Cache-Control: no-cache, no-store on every response (risky deploys)
  --handlers FILE.mjs  webhook event handlers: an ES module whose default export maps event kinds (or
                       "*") to async (event, ctx) => {} functions
  --forward URL        deliver every accepted webhook event to URL too (the app being built), with
                       the provider's exact body and signature fields; retried, listed in /$outbox.
                       A config file may say it instead (webhooks.forward), not both
  --help               this text

Environment:
  RESAPI_API_KEYS          comma-separated API keys (RFC 6750 token68 characters); when set, every
                           route but the webhook receiver and /$health needs Authorization: Bearer <key>
  RESAPI_WEBHOOK_SECRETS   comma-separated webhook signing secrets (current first, previous second)`;

export const CHECK_HELP = `Usage: resapi check BASE_URL [flags]

Grades the server at BASE_URL (http or https) against the conventions, black-box: one line per rule,
at most 120 characters: PASS, FAIL (with what was seen), SKIP (with why) or BLOCKED (a check it needs
failed, and it names that one), then the failures as root causes and a score per section. Each line
cites its rule as #anchor, a section of CONVENTIONS.md, resapi's conventions document (#etags:
CONVENTIONS.md#etags). Exit 0 when nothing failed, 1 when a check failed, 2 on a usage error or when
BASE_URL gives no HTTP answer (refused, unknown host, TLS failure, not HTTP: one line, nothing run).
It works in a collection of its own (rcheck-<random>), deletes what it stored when it ends, sends at
most 1,000 requests, and sends them only to BASE_URL.

Flags:
  --json                     print the report as one JSON document instead: per check its id,
                             section, rule (the sentence), source (the citation as text), anchor (the
                             section of CONVENTIONS.md), rfc (when the rule comes from an RFC or
                             OData), ruleUrl (with --docs-base), result (pass, fail or skip), verdict
                             (PASS, FAIL, SKIP or BLOCKED), detail, blockedBy, prerequisites, ms; then
                             the summary, rootCauses and sections
  --junit FILE               also write the report as JUnit XML to FILE: a testsuite per section, a
                             testcase per check, <failure> for FAIL, <skipped> for SKIP and BLOCKED
                             (the message of a blocked one starts "blocked by")
  --verbose                  under each check, the whole rule and reason and what was sent and seen
                             (with --json, as exchanges)
  --only ID|SECTION[,...]    run only these checks (conditional/replace) or sections (paging), and
                             what they need; a name that is neither is refused
  --skip ID|SECTION[,...]    leave these out; what needs them is skipped
  --header 'Name: value'     send this header field on every request (repeatable)
  --api-key-env NAME         send Authorization: Bearer with the key in $NAME on every request
  --collection NAME          run in this collection (and NAME-list) instead of rcheck-<random>
  --timeout MS               how long one request may wait for its answer (default 10000)
  --webhook-secret-env NAME  check the webhook receiver too, signing with the secret in $NAME
  --webhook-path PATH        where the receiver listens (default /webhooks)
  --webhook-scheme SCHEME    sign as its providers do: resapi (default), standard, github or stripe
  --docs-base URL            the URL of CONVENTIONS.md as published, e.g.
                             https://example.org/resapi/CONVENTIONS.md: under each line goes the
                             rule's URL (URL#anchor), indented, and --json gives it as ruleUrl
  --help                     this text`;

/** Every flag of `resapi check`, as an unknown one's refusal lists them. */
export const CHECK_FLAGS = [
  '--json', '--junit FILE', '--verbose', '--only ID|SECTION[,...]', '--skip ID|SECTION[,...]',
  "--header 'Name: value'", '--api-key-env NAME', '--collection NAME', '--timeout MS',
  '--webhook-secret-env NAME', '--webhook-path PATH', `--webhook-scheme ${WEBHOOK_SCHEMES.join('|')}`,
  '--docs-base URL', '--help',
] as const;

const CHECK_VALUE_FLAGS = new Set(CHECK_FLAGS.filter((flag) => flag.includes(' ')).map((flag) => flag.split(' ')[0]));
/** Values given once at most (--header is repeatable). */
const REPEATABLE = new Set(['--header']);
/** An HTTP field name, a token (RFC 9110 §5.1, §5.6.2). */
const FIELD_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** A field value: visible characters, spaces and tabs inside, nothing that ends a field line (RFC 9110 §5.5). */
const FIELD_VALUE = /^[\x21-\x7e\x80-\xff]([\t\x20-\x7e\x80-\xff]*[\x21-\x7e\x80-\xff])?$/;
/** Fields that frame the message or route it: the checker sets those itself. */
const FRAMING_FIELDS = new Set(['host', 'content-length', 'transfer-encoding', 'connection']);
/** The longest --timeout, ten minutes. */
const MAX_TIMEOUT_MS = 600_000;

export function parseArgs(argv: readonly string[]): ParsedArgs {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    return { ok: true, command: 'help', text: USAGE };
  }
  if (command === '--version' || command === '-v') return { ok: true, command: 'version' };
  if (command === 'sign') return parseSign(rest);
  if (command === 'check') return parseCheck(rest);
  if (command !== 'serve') return { ok: false, message: `unknown command '${command}'` };
  const values = new Map<string, string>();
  const flags = new Set<string>();
  if (rest.includes('--help') || rest.includes('-h')) return { ok: true, command: 'help', text: SERVE_HELP };
  for (let index = 0; index < rest.length; index++) {
    const arg = rest[index] as string;
    const equals = arg.indexOf('=');
    const name = arg.startsWith('--') && equals !== -1 ? arg.slice(0, equals) : arg;
    if (BOOLEAN_FLAGS.has(name)) {
      if (equals !== -1) return { ok: false, message: `${name} takes no value` };
      flags.add(name);
    } else if (VALUE_FLAGS.has(name)) {
      const value = equals !== -1 ? arg.slice(equals + 1) : rest[++index];
      // A flag where the value should be means the value was forgotten, not that it is "--memory".
      if (value === undefined || value === '' || (equals === -1 && value.startsWith('--'))) {
        return { ok: false, message: `${name} needs a value` };
      }
      if (values.has(name)) return { ok: false, message: `${name} given twice` };
      values.set(name, value);
    } else if (!arg.startsWith('-') && arg.endsWith('.json')) {
      // `resapi serve db.json`, as json-server is started: say how resapi spells it.
      return { ok: false, message: `'${arg}' is not an option; to load it into an empty store, use --seed ${arg}` };
    } else {
      return { ok: false, message: `unknown option '${arg}'` };
    }
  }
  const port = parsePort(values.get('--port') ?? '3000');
  if (port === undefined) return { ok: false, message: `--port must be an integer from 0 to 65535` };
  const baseUrl = values.get('--base-url');
  if (baseUrl !== undefined && !ABSOLUTE_HTTP_URL.test(baseUrl)) {
    return { ok: false, message: `--base-url must be an absolute http(s) URL without query or fragment` };
  }
  const forward = values.get('--forward');
  if (forward !== undefined && !isForwardUrl(forward)) {
    return { ok: false, message: '--forward must be an absolute http or https URL without credentials or fragment' };
  }
  const serve: ServeArgs = {
    host: values.get('--host') ?? '127.0.0.1',
    port,
    dataDir: values.get('--data-dir') ?? 'data/store',
    memory: flags.has('--memory'),
    noCacheMode: flags.has('--no-cache-mode'),
  };
  return { ok: true, command: 'serve', serve: withOptional(serve, values) };
}

/** `resapi sign --secret-env NAME`: the variable's name, never the secret itself (which `ps` would show). */
function parseSign(rest: readonly string[]): ParsedArgs {
  const [flag, name, ...extra] = rest;
  const inline = flag?.startsWith('--secret-env=') === true ? flag.slice('--secret-env='.length) : undefined;
  const secretEnv = inline ?? (flag === '--secret-env' ? name : undefined);
  const leftover = inline === undefined ? extra : [name, ...extra].filter((arg): arg is string => arg !== undefined);
  if (secretEnv === undefined || secretEnv === '' || leftover.length > 0 || !VARIABLE_NAME.test(secretEnv)) {
    return {
      ok: false,
      message: 'usage: resapi sign --secret-env NAME < body (NAME is an environment variable holding the secret)',
    };
  }
  return { ok: true, command: 'sign', secretEnv };
}

/** `resapi check BASE_URL [flags]`; secrets come by the name of a variable, never on the command line. */
function parseCheck(rest: readonly string[]): ParsedArgs {
  if (rest.includes('--help') || rest.includes('-h')) return { ok: true, command: 'help', text: CHECK_HELP };
  let baseUrl: string | undefined;
  let json = false;
  let verbose = false;
  const values = new Map<string, string>();
  const headerLines: string[] = [];
  for (let index = 0; index < rest.length; index++) {
    const arg = rest[index] as string;
    const equals = arg.indexOf('=');
    const name = arg.startsWith('--') && equals !== -1 ? arg.slice(0, equals) : arg;
    if (name === '--json' || name === '--verbose') {
      if (equals !== -1) return { ok: false, message: `${name} takes no value` };
      if (name === '--json') json = true;
      else verbose = true;
    } else if (CHECK_VALUE_FLAGS.has(name)) {
      const value = equals !== -1 ? arg.slice(equals + 1) : rest[++index];
      if (value === undefined || value === '' || (equals === -1 && value.startsWith('--'))) {
        return { ok: false, message: `${name} needs a value` };
      }
      if (REPEATABLE.has(name)) headerLines.push(value);
      else if (values.has(name)) return { ok: false, message: `${name} given twice` };
      else values.set(name, value);
    } else if (!arg.startsWith('-') && baseUrl === undefined) {
      baseUrl = arg;
    } else {
      return { ok: false, message: `unknown option '${arg}' for resapi check; known flags: ${CHECK_FLAGS.join(', ')}` };
    }
  }
  if (baseUrl === undefined) return { ok: false, message: 'resapi check needs the base URL of the server to check' };
  if (!ABSOLUTE_HTTP_URL.test(baseUrl)) {
    return { ok: false, message: 'the base URL must be an absolute http(s) URL without query or fragment' };
  }
  const refusal = checkValueProblem(values);
  if (refusal !== undefined) return { ok: false, message: refusal };
  const headers = parseHeaders(headerLines, values.has('--api-key-env'));
  if (typeof headers === 'string') return { ok: false, message: headers };
  const only = values.get('--only');
  const skip = values.get('--skip');
  const timeout = values.get('--timeout');
  const scheme = WEBHOOK_SCHEMES.find((known) => known === values.get('--webhook-scheme'));
  type TextField = 'junit' | 'apiKeyEnv' | 'collection' | 'webhookSecretEnv' | 'webhookPath' | 'docsBase';
  const text = (flag: string, field: TextField): Partial<Record<TextField, string>> => {
    const given = values.get(flag);
    return given === undefined ? {} : { [field]: given };
  };
  const check: CheckArgs = {
    baseUrl,
    json,
    ...(verbose ? { verbose: true } : {}),
    ...text('--junit', 'junit'),
    ...(only === undefined ? {} : { only: splitList(only) }),
    ...(skip === undefined ? {} : { skip: splitList(skip) }),
    ...(headers.length === 0 ? {} : { headers }),
    ...text('--api-key-env', 'apiKeyEnv'),
    ...text('--collection', 'collection'),
    ...(timeout === undefined ? {} : { timeoutMs: Number(timeout) }),
    ...text('--webhook-secret-env', 'webhookSecretEnv'),
    ...text('--webhook-path', 'webhookPath'),
    ...(scheme === undefined ? {} : { webhookScheme: scheme }),
    ...text('--docs-base', 'docsBase'),
  };
  return { ok: true, command: 'check', check };
}

/** Why one of the values of `resapi check` cannot be taken, or undefined when all can. */
function checkValueProblem(values: ReadonlyMap<string, string>): string | undefined {
  for (const flag of ['--webhook-secret-env', '--api-key-env']) {
    const variable = values.get(flag);
    if (variable !== undefined && !VARIABLE_NAME.test(variable)) {
      return `${flag} takes the name of an environment variable`;
    }
  }
  const webhookPath = values.get('--webhook-path');
  if (webhookPath !== undefined && !webhookPath.startsWith('/')) return '--webhook-path must start with /';
  const scheme = values.get('--webhook-scheme');
  if (scheme !== undefined && !(WEBHOOK_SCHEMES as readonly string[]).includes(scheme)) {
    return `--webhook-scheme must be one of ${WEBHOOK_SCHEMES.join(', ')}, not '${scheme}'`;
  }
  const docsBase = values.get('--docs-base');
  if (docsBase !== undefined && !isDocumentUrl(docsBase)) {
    return '--docs-base must be the absolute http(s) URL of CONVENTIONS.md, without a fragment';
  }
  const collection = values.get('--collection');
  if (collection !== undefined && !(isCollectionName(collection) && collection.length <= MAX_RUN_COLLECTION)) {
    const name = 'a letter, then letters, digits, _ or -';
    return `--collection must be a collection name (${name}) of at most ${MAX_RUN_COLLECTION} characters`;
  }
  const timeout = values.get('--timeout');
  const inRange = (ms: number): boolean => ms >= 1 && ms <= MAX_TIMEOUT_MS;
  if (timeout !== undefined && !(/^\d{1,6}$/.test(timeout) && inRange(Number(timeout)))) {
    return `--timeout must be a whole number of milliseconds from 1 to ${MAX_TIMEOUT_MS}`;
  }
  const checks = checksInOrder();
  for (const flag of ['--only', '--skip']) {
    const list = values.get(flag);
    if (list === undefined) continue;
    const names = splitList(list);
    if (names.length === 0) return `${flag} needs a value`;
    const unknown = unknownSelectors(checks, names);
    if (unknown.length > 0) {
      const sections = [...new Set(checks.map((check) => check.section))].join(', ');
      const hint = `sections: ${sections}; a check is section/name`;
      return `${flag}: no check or section is named ${unknown.join(', ')} (${hint})`;
    }
  }
  return undefined;
}

/** `Name: value` lines as fields, or why one cannot be sent. */
function parseHeaders(lines: readonly string[], apiKey: boolean): (readonly [string, string])[] | string {
  const fields: (readonly [string, string])[] = [];
  for (const line of lines) {
    const colon = line.indexOf(':');
    const name = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? '' : line.slice(colon + 1).trim();
    if (colon === -1 || !FIELD_NAME.test(name) || !FIELD_VALUE.test(value)) {
      return `--header takes 'Name: value' (a field name, a colon, a value without line breaks): '${line}'`;
    }
    const lower = name.toLowerCase();
    if (FRAMING_FIELDS.has(lower)) return `--header cannot set ${name}: the checker sets it for each request`;
    if (lower === 'authorization' && apiKey) {
      return '--header Authorization and --api-key-env both set the credentials: give one';
    }
    if (fields.some(([other]) => other.toLowerCase() === lower)) return `--header ${name} given twice`;
    fields.push([name, value]);
  }
  return fields;
}

/** Splits a comma-separated list from the environment; empty members are dropped. */
export function splitList(value: string | undefined): string[] {
  if (value === undefined) return [];
  return value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

function withOptional(serve: ServeArgs, values: ReadonlyMap<string, string>): ServeArgs {
  const baseUrl = values.get('--base-url');
  const config = values.get('--config');
  const seed = values.get('--seed');
  const handlers = values.get('--handlers');
  const forward = values.get('--forward');
  return {
    ...serve,
    ...(baseUrl === undefined ? {} : { baseUrl }),
    ...(config === undefined ? {} : { config }),
    ...(seed === undefined ? {} : { seed }),
    ...(handlers === undefined ? {} : { handlers }),
    ...(forward === undefined ? {} : { forward }),
  };
}

/** What webhooks.forward takes (lib/config.ts): an http(s) URL, at most 2048 characters, no credentials or fragment. */
function isForwardUrl(text: string): boolean {
  if (text.length > MAX_FORWARD_URL || !URL.canParse(text)) return false;
  const url = new URL(text);
  const web = url.protocol === 'http:' || url.protocol === 'https:';
  return web && url.username === '' && url.password === '' && url.hash === '';
}

function parsePort(text: string): number | undefined {
  if (!/^\d{1,5}$/.test(text)) return undefined;
  const port = Number(text);
  return port <= 65535 ? port : undefined;
}
