// The `resapi` executable (CONVENTIONS.md#command-line). `serve` prints `listening on http://HOST:PORT` as the first
// line on stdout (tests and scripts wait for it), logs to stderr, and on SIGTERM/SIGINT stops
// accepting, drains in-flight requests (up to 10 s), flushes the store and exits 0.
import { readFile } from 'node:fs/promises';
import { packageVersion } from '../version.js';
import { DEFAULT_CONFIG, parseConfig, type Config } from '../config.js';
import { start, type StartOptions } from '../server.js';
import { receivingSources } from '../webhooks/sources.js';
import { parseArgs, splitList, USAGE, type ServeArgs } from './args.js';
import { check } from './check.js';
import { loadHandlers } from './handlers.js';
import { sign } from './sign.js';

/** A source's secrets: the current one and, during a rotation, the previous one. */
const MAX_SECRETS = 2;

export async function main(argv: readonly string[]): Promise<number> {
  const parsed = parseArgs(argv);
  if (!parsed.ok) {
    process.stderr.write(`resapi: ${parsed.message}\n\n${USAGE}\n`);
    return 2;
  }
  if (parsed.command === 'help') {
    process.stdout.write(`${parsed.text}\n`);
    return 0;
  }
  if (parsed.command === 'version') {
    process.stdout.write(`${await packageVersion()}\n`);
    return 0;
  }
  if (parsed.command === 'sign') return sign(parsed.secretEnv);
  if (parsed.command === 'check') return check(parsed.check);
  return serve(parsed.serve);
}

async function serve(args: ServeArgs): Promise<number> {
  const handlers = args.handlers === undefined ? undefined : await loadHandlers(args.handlers);
  if (handlers !== undefined && !handlers.ok) {
    process.stderr.write(`resapi: cannot start: ${handlers.message}\n`);
    return 1;
  }
  const fileConfig =
    args.config === undefined ? { raw: {}, config: DEFAULT_CONFIG } : await readConfigFile(args.config);
  if (fileConfig === undefined) return 1;
  const webhooks = withForward(fileConfig.raw, args);
  if (webhooks === undefined) return 1;
  const webhookSecrets = sourceSecretsFromEnv(fileConfig.config);
  if (!webhookSecrets.ok) {
    process.stderr.write(`resapi: cannot start: ${webhookSecrets.message}\n`);
    return 1;
  }
  const options: StartOptions = {
    ...fileConfig.raw,
    ...webhooks,
    host: args.host,
    port: args.port,
    dataDir: args.dataDir,
    memory: args.memory,
    noCacheMode: args.noCacheMode,
    apiKeys: splitList(process.env['RESAPI_API_KEYS']),
    webhookSecrets: webhookSecrets.secrets,
    ...(handlers === undefined ? {} : { webhookHandlers: handlers.handlers }),
    ...(args.baseUrl === undefined ? {} : { baseUrl: args.baseUrl }),
    ...(args.seed === undefined ? {} : { seed: args.seed }),
  };
  let server;
  try {
    server = await start(options);
  } catch (error) {
    process.stderr.write(`resapi: cannot start: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
  const running = server;
  const stopped = new Promise<number>((resolve) => {
    const stop = (signal: string): void => {
      process.stderr.write(`resapi: ${signal}: draining and shutting down\n`);
      running.close().then(
        () => resolve(0),
        (error: unknown) => {
          process.stderr.write(`resapi: shutdown failed: ${error instanceof Error ? error.message : String(error)}\n`);
          resolve(1);
        },
      );
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
  // Only once the signals are handled: a script that reads this line and at once sends SIGTERM
  // must get a clean shutdown, not the default action of a signal nobody listens to.
  process.stdout.write(`listening on ${server.url}\n`);
  return stopped;
}

/**
 * Each receiving source's secrets, from the environment variable its configuration names
 * (`secretsEnv`; RESAPI_WEBHOOK_SECRETS for the default source): secrets never sit in the config
 * file (CONVENTIONS.md#receiving-sources). A source whose variable is unset or blank has none.
 */
function sourceSecretsFromEnv(
  config: Config,
): { ok: true; secrets: Record<string, string[]> } | { ok: false; message: string } {
  const secrets: Record<string, string[]> = {};
  for (const source of receivingSources(config)) {
    const read = secretsFromEnv(source.secretsEnv);
    if (!read.ok) return read;
    if (read.secrets.length > MAX_SECRETS) {
      const message = `${source.secretsEnv}: at most ${MAX_SECRETS} secrets, the current one first and the previous ` +
        'one second (CONVENTIONS.md#secret-rotation)';
      return { ok: false, message };
    }
    if (read.secrets.length > 0) secrets[source.name] = read.secrets;
  }
  return { ok: true, secrets };
}

/**
 * The webhook secrets in the environment variable `name` (CONVENTIONS.md#secrets): comma-separated,
 * each trimmed. Unset or blank means none (the receiver answers 503); an empty member of a list
 * (`a,`, `a,,b`) is a mistake that refuses the start, naming the variable, never a secret.
 */
function secretsFromEnv(name: string): { ok: true; secrets: string[] } | { ok: false; message: string } {
  const value = process.env[name] ?? '';
  if (value.trim() === '') return { ok: true, secrets: [] };
  const secrets = value.split(',').map((secret) => secret.trim());
  const empty = secrets.indexOf('');
  if (empty === -1) return { ok: true, secrets };
  const message =
    `${name}: secret ${empty + 1} of ${secrets.length} is empty; a webhook secret cannot be empty ` +
    '(CONVENTIONS.md#secrets): remove the stray comma';
  return { ok: false, message };
}

/**
 * The config file's `webhooks` with `--forward` in it (CONVENTIONS.md#forwarding), or nothing to add
 * without the flag. Both saying where to forward refuses the start (printed here, undefined back):
 * two places would name the one URL, and neither silently wins.
 */
function withForward(fileConfig: Record<string, unknown>, args: ServeArgs): Pick<StartOptions, 'webhooks'> | undefined {
  if (args.forward === undefined) return {};
  // The file passed parseConfig: `webhooks`, when given, is an object of its keys.
  const webhooks = (fileConfig['webhooks'] ?? {}) as NonNullable<StartOptions['webhooks']>;
  if (webhooks['forward'] !== undefined) {
    const message =
      `--forward and webhooks.forward in ${args.config} both say where to forward accepted events: ` +
      'give one of them';
    process.stderr.write(`resapi: cannot start: ${message}\n`);
    return undefined;
  }
  return { webhooks: { ...webhooks, forward: args.forward } };
}

/** Reads and validates --config; on failure prints why (naming the key) and returns undefined. */
async function readConfigFile(path: string): Promise<{ raw: Record<string, unknown>; config: Config } | undefined> {
  let value: unknown;
  try {
    value = JSON.parse(await readFile(path, 'utf8'));
  } catch (error) {
    process.stderr.write(`resapi: config ${path}: ${error instanceof Error ? error.message : String(error)}\n`);
    return undefined;
  }
  const parsed = parseConfig(value);
  if (!parsed.ok) {
    process.stderr.write(`resapi: config ${path}: ${parsed.message}\n`);
    return undefined;
  }
  return { raw: value as Record<string, unknown>, config: parsed.config };
}
