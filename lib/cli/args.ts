// Command-line arguments of `resapi serve`, `resapi sign` and `resapi check` (CONVENTIONS.md#command-line,
// CONVENTIONS.md#conformance-checker). Pure: argv in, options or a usage error out, so every flag is
// unit-tested without starting anything.
import { isDocumentUrl } from '../check/rules.js';

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
  readonly apiKeyEnv?: string;
  readonly only?: readonly string[];
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
  resapi check BASE_URL [--json] [--webhook-secret-env NAME] [--api-key-env NAME]
                             grade a server against the conventions, one line per rule; exit 1 on a
                             failure (resapi check --help says more)
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
PASS, FAIL (with what was seen) or SKIP (with why), then a summary. Each line cites its rule as
#anchor, a section of CONVENTIONS.md, resapi's conventions document (#etags: CONVENTIONS.md#etags).
Exit 0 when nothing failed, 1 when a check failed, 2 on a usage error. It works in a collection of
its own (rcheck-<random>), deletes everything it stored when it ends, sends at most 1,000 requests,
and sends them only to BASE_URL.

Flags:
  --json                     print the report as one JSON document instead of lines: per check its
                             id, section, rule (the sentence), source (the citation as text),
                             anchor (the section of CONVENTIONS.md), rfc (when the rule comes from
                             an RFC or OData), ruleUrl (with --docs-base), result and detail
  --docs-base URL            the URL of CONVENTIONS.md as published, e.g.
                             https://example.org/resapi/CONVENTIONS.md: under each line goes the
                             rule's URL (URL#anchor), indented, and --json gives it as ruleUrl
  --webhook-secret-env NAME  check the webhook receiver too, signing with the secret in $NAME
  --webhook-path PATH        where the receiver listens (default /webhooks)
  --api-key-env NAME         send Authorization: Bearer with the key in $NAME on every request
  --only PREFIX[,PREFIX]     run only the checks whose id starts with a prefix (conditional/, paging/)
  --help                     this text`;

const CHECK_VALUE_FLAGS = new Set(['--webhook-secret-env', '--webhook-path', '--api-key-env', '--only', '--docs-base']);

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
  const values = new Map<string, string>();
  for (let index = 0; index < rest.length; index++) {
    const arg = rest[index] as string;
    const equals = arg.indexOf('=');
    const name = arg.startsWith('--') && equals !== -1 ? arg.slice(0, equals) : arg;
    if (name === '--json') {
      if (equals !== -1) return { ok: false, message: '--json takes no value' };
      json = true;
    } else if (CHECK_VALUE_FLAGS.has(name)) {
      const value = equals !== -1 ? arg.slice(equals + 1) : rest[++index];
      if (value === undefined || value === '' || (equals === -1 && value.startsWith('--'))) {
        return { ok: false, message: `${name} needs a value` };
      }
      if (values.has(name)) return { ok: false, message: `${name} given twice` };
      values.set(name, value);
    } else if (!arg.startsWith('-') && baseUrl === undefined) {
      baseUrl = arg;
    } else {
      return { ok: false, message: `unknown option '${arg}' (resapi check --help)` };
    }
  }
  if (baseUrl === undefined) return { ok: false, message: 'resapi check needs the base URL of the server to check' };
  if (!ABSOLUTE_HTTP_URL.test(baseUrl)) {
    return { ok: false, message: 'the base URL must be an absolute http(s) URL without query or fragment' };
  }
  for (const flag of ['--webhook-secret-env', '--api-key-env']) {
    const variable = values.get(flag);
    if (variable !== undefined && !VARIABLE_NAME.test(variable)) {
      return { ok: false, message: `${flag} takes the name of an environment variable` };
    }
  }
  const webhookPath = values.get('--webhook-path');
  if (webhookPath !== undefined && !webhookPath.startsWith('/')) {
    return { ok: false, message: '--webhook-path must start with /' };
  }
  const docsBase = values.get('--docs-base');
  if (docsBase !== undefined && !isDocumentUrl(docsBase)) {
    return { ok: false, message: '--docs-base must be the absolute http(s) URL of CONVENTIONS.md, without a fragment' };
  }
  const only = values.get('--only');
  const webhookSecretEnv = values.get('--webhook-secret-env');
  const apiKeyEnv = values.get('--api-key-env');
  const check: CheckArgs = {
    baseUrl,
    json,
    ...(webhookSecretEnv === undefined ? {} : { webhookSecretEnv }),
    ...(webhookPath === undefined ? {} : { webhookPath }),
    ...(apiKeyEnv === undefined ? {} : { apiKeyEnv }),
    ...(only === undefined ? {} : { only: splitList(only) }),
    ...(docsBase === undefined ? {} : { docsBase }),
  };
  return { ok: true, command: 'check', check };
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
