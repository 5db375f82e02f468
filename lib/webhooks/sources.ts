// The receiving sources (CONVENTIONS.md#receiving-sources): each receiving path with its scheme, its
// name and its secrets. A source's name is `webhooks` for the default source (the receiver at
// `/webhooks`, or at `webhooks.path` when no `webhooks.sources` are configured) and `<name>` for
// `/webhooks/<name>`; it is what `/$inbox` items and handlers see as `source`, and what
// `start({ webhookSecrets })` is keyed by.
//
// Secrets (CONVENTIONS.md#secrets): the CLI reads each source's `secretsEnv`; `start()` takes an
// array (the first source's secrets, which without `webhooks.sources` is the default source, as
// before sources existed) or a record of arrays by source name. Each is a non-empty string, at most
// two per source (the current first, the previous second: CONVENTIONS.md#secret-rotation); a secret
// is never logged, and the start-up lines below name a source and its variable, never a value.
import { webhookSources, type Config, type WebhookScheme } from '../config.js';
import { signingKey } from '../protocol/standard-signature.js';

/** The source name of the default receiver. */
export const DEFAULT_SOURCE = 'webhooks';
const NAMED_PREFIX = '/webhooks/';
/** At most two: the current first, the previous second (CONVENTIONS.md#secret-rotation). */
const MAX_SECRETS = 2;
/** A shorter webhook secret is named in a warning at start (CONVENTIONS.md#secrets). */
const MIN_SECRET_BYTES = 16;
const SECRET_ROLES = ['current', 'previous'] as const;

export interface ReceivingSource {
  /** `webhooks`, or `<name>` of `/webhooks/<name>`. */
  readonly name: string;
  readonly path: string;
  readonly scheme: WebhookScheme;
  /** The environment variable that holds its secrets (its name, never a secret). */
  readonly secretsEnv: string;
}

/** `start({ webhookSecrets })`: the first source's secrets, or the secrets of each source by name. */
export type WebhookSecretsOption = readonly string[] | Readonly<Record<string, readonly string[]>>;

/** The configured sources with their names, in configuration order. */
export function receivingSources(config: Config): readonly ReceivingSource[] {
  const named = config.webhooks.sources !== undefined;
  return webhookSources(config).map((source) => {
    const path = source.path;
    const name = named && path.startsWith(NAMED_PREFIX) ? path.slice(NAMED_PREFIX.length) : DEFAULT_SOURCE;
    return { name, path: source.path, scheme: source.scheme, secretsEnv: source.secretsEnv };
  });
}

/**
 * The secrets of each source by name, checked: non-empty strings, at most two per source. A source
 * without an entry has none (its path answers 503). Throws a TypeError naming the option, never a secret.
 */
export function sourceSecrets(
  option: WebhookSecretsOption | undefined,
  sources: readonly ReceivingSource[],
): ReadonlyMap<string, readonly string[]> {
  const secrets = new Map<string, readonly string[]>();
  if (option === undefined) return secrets;
  if (Array.isArray(option)) {
    const first = sources[0] as ReceivingSource;
    secrets.set(first.name, checkedSecrets(option, 'webhookSecrets'));
    return secrets;
  }
  if (typeof option !== 'object' || option === null || Object.getPrototypeOf(option) !== Object.prototype) {
    throw new TypeError('webhookSecrets: must be an array of strings, or an object of arrays by source name');
  }
  const names = sources.map((source) => source.name);
  for (const [name, value] of Object.entries(option as Readonly<Record<string, unknown>>)) {
    if (!names.includes(name)) {
      const known = names.map((known) => JSON.stringify(known)).join(', ');
      const detail = `no receiving source is named ${JSON.stringify(name)} (the sources: ${known})`;
      throw new TypeError(`webhookSecrets: ${detail}`);
    }
    secrets.set(name, checkedSecrets(value, `webhookSecrets.${name}`));
  }
  return secrets;
}

/** One line per source that has no secret: its path answers 503 until it gets one (said once, at start). */
export function missingSecretLines(
  sources: readonly ReceivingSource[],
  secrets: ReadonlyMap<string, readonly string[]>,
): string[] {
  return sources
    .filter((source) => (secrets.get(source.name) ?? []).length === 0)
    .map((source) => `${describeSource(source)} answers 503: no secret is configured (${source.secretsEnv})`);
}

/**
 * One warning line per source with a secret shorter than MIN_SECRET_BYTES (the bytes of the key it
 * stands for: after `whsec_`, the base64-decoded ones; else its UTF-8 bytes). Such a secret still
 * starts the server: providers' published test vectors use short ones. A line names the secret's role
 * and its source, never the secret.
 */
export function shortSecretLines(
  sources: readonly ReceivingSource[],
  secrets: ReadonlyMap<string, readonly string[]>,
): string[] {
  const lines: string[] = [];
  for (const source of sources) {
    const given = secrets.get(source.name) ?? [];
    const short = SECRET_ROLES.filter((_, index) => {
      const secret = given[index];
      return secret !== undefined && signingKey(secret).length < MIN_SECRET_BYTES;
    });
    if (short.length === 0) continue;
    const of = source.name === DEFAULT_SOURCE ? '' : ` of the source ${source.name}`;
    const which = short.length === 2
      ? `both the current and the previous webhook secret${of} are`
      : `the ${short[0]} webhook secret${of} is`;
    lines.push(`${which} shorter than ${MIN_SECRET_BYTES} bytes, which makes a signature easier to forge: ` +
      `use at least ${MIN_SECRET_BYTES} random bytes (CONVENTIONS.md#secrets)`);
  }
  return lines;
}

/** The 503's detail for a source without a secret: what is missing and where it goes, never a value. */
export function noSecretDetail(source: ReceivingSource): string {
  return `No secret is configured for ${describeSource(source)}, so no delivery can be verified: set ` +
    `${source.secretsEnv} in the server's environment (comma-separated, the current secret first) and restart it.`;
}

function describeSource(source: ReceivingSource): string {
  return source.name === DEFAULT_SOURCE
    ? `the webhook receiver at ${source.path}`
    : `the webhook source ${source.name} at ${source.path}`;
}

function checkedSecrets(value: unknown, key: string): readonly string[] {
  if (!Array.isArray(value) || value.some((secret) => typeof secret !== 'string')) {
    throw new TypeError(`${key}: must be an array of strings`);
  }
  const empty = value.indexOf('');
  if (empty !== -1) {
    const detail = `secret ${empty + 1} is empty; a webhook secret cannot be empty (CONVENTIONS.md#secrets)`;
    throw new TypeError(`${key}: ${detail}`);
  }
  if (value.length > MAX_SECRETS) {
    throw new TypeError(`${key}: at most two secrets, the current one first and the previous one second`);
  }
  return Object.freeze([...(value as string[])]);
}
