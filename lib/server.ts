// start(): the embeddable server (CONVENTIONS.md#embedding). It opens the store, loads the seed, builds
// the one write path and the request pipeline, and hands every part with work of its own to one
// lifecycle (lib/lifecycle.ts): the store first, HTTP last, so close() stops accepting, lets in-flight
// requests finish (up to the drain timeout), then closes the store so that every acknowledged write
// is flushed and the data dir released.
import { systemClock, systemRandom, type Clock, type Random } from './clock.js';
import { collectionConfig, DEFAULT_CONFIG, parseConfig, type CollectionConfig, type Config } from './config.js';
import { createHandler } from './app.js';
import { ApiKeys } from './http/auth.js';
import type { CachePolicy } from './http/cache-policy.js';
import { corsPolicy } from './http/cors.js';
import { httpListener } from './http/listener.js';
import { Lifecycle, type Component } from './lifecycle.js';
import { stderrLogger, type Logger } from './log.js';
import { KnownProperties } from './query/known-properties.js';
import type { App } from './resources/context.js';
import { routeTable } from './routes.js';
import { openApiDocument } from './openapi.js';
import { packageVersion } from './version.js';
import { SerialQueues } from './serial.js';
import { checkSeed, loadSeed, readSeed, seedSkipReason, type SeedData } from './seed.js';
import { dataDirExists, openFileStore } from './store/file.js';
import { MemoryStore } from './store/memory.js';
import type { Store, StoreObserver } from './store/types.js';
import { represent } from './protocol/representation.js';
import { RepresentationCache } from './resources/representation-cache.js';
import { receiverAnswers } from './resources/receiver.js';
import { KeysInFlight } from './resources/idempotency.js';
import { changeProblem, Writer } from './writes/writer.js';
import { Inbox, type WebhookHandler, type WebhookHandlers } from './webhooks/inbox.js';
import { OutboxEvents } from './webhooks/events.js';
import { Outbox } from './webhooks/outbox.js';
import { RefusalLog } from './webhooks/refusal-log.js';
import {
  missingSecretLines, receivingSources, shortSecretLines, sourceSecrets, type WebhookSecretsOption,
} from './webhooks/sources.js';
import { pointsAtSelf } from './webhooks/subscriptions.js';
import { PageCache } from './resources/page-cache.js';
import { ServerMetrics } from './server-metrics.js';
import { EqualityIndexes } from './query/equality-index.js';
import { FilterSlots } from './query/expensive.js';
import { SendQueue } from './http/send-queue.js';

/** Options of start() that are not part of the config file. */
export interface RuntimeOptions {
  readonly host?: string;
  /** 0 picks a free port. Default 3000. */
  readonly port?: number;
  /** The durable store's folder (journal, snapshot, lock). Without it start() keeps everything in memory. */
  readonly dataDir?: string;
  /** Keep everything in memory (no files), even when dataDir is given. */
  readonly memory?: boolean;
  /** A store to serve instead of opening one (for tests that inject failures); close() closes it. */
  readonly store?: Store;
  /** Absolute base for links, e.g. https://api.example.com (never taken from the request's Host). */
  readonly baseUrl?: string;
  /** Risky-deploy mode: every response says Cache-Control: no-cache, no-store (CONVENTIONS.md#cache-control). */
  readonly noCacheMode?: boolean;
  /** A folder of JSON arrays or a db.json loaded into a store that is still empty. */
  readonly seed?: string;
  readonly apiKeys?: readonly string[];
  /**
   * The receiving sources' secrets (CONVENTIONS.md#receiving-sources): an array is the first source's
   * (without `webhooks.sources`, the default receiver's), a record gives each source's by its name
   * (`webhooks` for /webhooks, `<name>` for /webhooks/<name>). Each: the current secret, and the
   * previous one during a rotation (at most two).
   */
  readonly webhookSecrets?: WebhookSecretsOption;
  /** Webhook handlers by event kind (or "*"), registered before the first event can arrive. */
  readonly webhookHandlers?: Readonly<Record<string, WebhookHandler>>;
  /** The one clock of the server: the time and every timer (default: the system clock). */
  readonly clock?: Clock;
  /** The one random source: ids, keys and jitter (default: node:crypto and Math.random). */
  readonly random?: Random;
  readonly log?: Logger;
  /** How long close() waits for in-flight requests before cutting connections. Default 10 s. */
  readonly drainTimeoutMs?: number;
  /** Time allowed for a request's header section (default 10 s) and for the whole request (60 s). */
  readonly headersTimeoutMs?: number;
  readonly requestTimeoutMs?: number;
  /** The slots expensive filters share, instead of `limits.expensiveFilters` new ones (a test holds them). */
  readonly filterSlots?: FilterSlots;
}

/**
 * The configuration as start() and `--config FILE` take it: the keys of Config, each optional at every
 * depth (a list is given whole). No index signature, so a misspelt key in an object literal does not
 * compile (TypeScript's excess property check); JavaScript callers get the runtime refusal of configOf.
 */
export type ConfigOptions = Optional<Config>;
type Optional<T> = T extends readonly unknown[]
  ? T
  : T extends object
    ? { readonly [K in keyof T]?: Optional<T[K]> }
    : T;

/** Every option of start(): its own (RuntimeOptions) and every configuration key (CONVENTIONS.md#embedding). */
export type StartOptions = RuntimeOptions & ConfigOptions;

export interface ResapiServer {
  /** http://host:port of the listening server. */
  readonly url: string;
  readonly store: Store;
  /** `webhooks.on(kind, handler)`: who processes received events of a kind, or of every kind ("*"). */
  readonly webhooks: WebhookHandlers;
  close(): Promise<void>;
}

// Every key of RuntimeOptions, checked by the compiler both ways: start() keeps these away from the
// configuration, and names them (with the configuration's) when a key is unknown.
const RUNTIME_KEYS: { readonly [K in keyof RuntimeOptions]-?: true } = {
  host: true, port: true, dataDir: true, memory: true, store: true, baseUrl: true, noCacheMode: true, seed: true,
  apiKeys: true, webhookSecrets: true, webhookHandlers: true, clock: true, random: true, log: true,
  drainTimeoutMs: true, headersTimeoutMs: true, requestTimeoutMs: true, filterSlots: true,
};
/** An unknown key this close to a known one (edits) is named as the likely one meant. */
const MAX_SUGGESTION_EDITS = 2;
const KEY_SPACE = '$keys';
const PAGING_KEY = 'paging';
const PAGING_KEY_BYTES = 32;
const DEFAULT_DRAIN_MS = 10_000;
/** What deliveries of the webhook sender say they come from. */
const USER_AGENT = 'resapi (webhook sender)';

export async function start(options: StartOptions = {}): Promise<ResapiServer> {
  const config = configOf(options);
  const clock = options.clock ?? systemClock;
  const random = options.random ?? systemRandom;
  const log = options.log ?? stderrLogger(() => clock.now());
  const apiKeys = new ApiKeys(options.apiKeys ?? []);
  const cors = corsPolicy(config.cors.origins, apiKeys.enabled);
  if (!cors.ok) throw new TypeError(`start(): ${cors.message}`);
  const webhookSources = receivingSources(config);
  const webhookSecrets = sourceSecrets(options.webhookSecrets, webhookSources);
  const handlers = handlersOf(options.webhookHandlers);
  const drainTimeoutMs = options.drainTimeoutMs ?? DEFAULT_DRAIN_MS;
  const collectionConfigOf = (name: string): CollectionConfig | undefined => collectionConfig(config, name);
  // Everything that can refuse the start without a store is asked first, so a refused start leaves
  // no data dir behind: the port, then a seed bound for a store that does not exist yet.
  const http = httpListener({
    host: options.host ?? '127.0.0.1',
    port: options.port ?? 3000,
    clock,
    random,
    ...listenerTimeouts(options),
  });
  await http.bind();
  const lifecycle = new Lifecycle(log);
  try {
    await checkForward(config.webhooks.forward, http.url, options.baseUrl, log);
    const seed =
      options.seed === undefined
        ? undefined
        : await readNewStoreSeed(options, options.seed, clock, collectionConfigOf);
    const metrics = new ServerMetrics();
    const store = await openStore(options, clock, random, log, metrics);
    lifecycle.add(storeComponent(store));
    const representations = new RepresentationCache();
    const outboxEvents = new OutboxEvents({ store, clock, random, representations });
    const writer = new Writer({
      store,
      clock,
      representations,
      collectionConfig: collectionConfigOf,
      propertyNames: config.limits.maxPropertyNames,
      events: (changes, represented) => outboxEvents.mutations(changes, represented),
    });
    if (options.seed !== undefined) {
      const skipped = seedSkipReason(store);
      if (skipped !== undefined) log('info', `seed not loaded: ${skipped}`, { path: options.seed });
      const seeded = await loadSeed(writer, store, seed ?? options.seed, clock);
      if (!seeded.ok) throw new Error(seeded.message);
      for (const note of seeded.notes ?? []) log('info', note);
      if (seeded.loaded > 0) {
        log('info', 'seed loaded', { path: options.seed, items: seeded.loaded });
        store.keepDocumentsAsText();
      }
    }
    const pagingKey = await pagingKeyOf(store, writer, random);
    const caughtUp = writer.fields.missingRegistrations();
    if (caughtUp.length > 0) {
      const registered = await writer.write(caughtUp);
      if (!registered.ok) {
        throw new Error(`cannot record the fields of existing collections (${registered.reason})`);
      }
    }
    const knownProperties = new KnownProperties(
      (name) => collectionConfigOf(name)?.schema,
      (name) => writer.fields.paths(name),
    );
    const table = routeTable(config);
    const baseUrl = (options.baseUrl ?? '').replace(/\/+$/, '');
    // Links are relative without --base-url, so the description names the address the server listens on.
    const description = openApiDocument(config, table, {
      version: await packageVersion(),
      serverUrl: baseUrl === '' ? http.url : baseUrl,
      apiKeys: apiKeys.enabled,
    });
    const policy: CachePolicy = {
      noCacheMode: options.noCacheMode === true,
      credentialed: apiKeys.enabled,
      perCollection: (name) => collectionConfig(config, name)?.cacheControl,
    };
    const app: App = {
      store,
      writer,
      config,
      policy,
      representations,
      metrics,
      pages: new PageCache(store),
      indexes: new EqualityIndexes(store),
      sendQueue: new SendQueue(clock, config.limits),
      filterSlots: options.filterSlots ?? new FilterSlots(config.limits.expensiveFilters),
      log,
      clock,
      random,
      baseUrl,
      keysInFlight: new KeysInFlight(),
      pagingKey,
      knownProperties,
      bulkTurns: new SerialQueues(),
      postTurns: new SerialQueues(),
      webhookSources,
      webhookSecrets,
      refusals: new RefusalLog(log, clock),
      inbox: new Inbox({ store, writer, clock, random, config: config.webhooks, log, drainTimeoutMs }),
      outbox: new Outbox({
        store,
        writer,
        clock,
        random,
        config: config.outbox,
        log,
        drainTimeoutMs,
        userAgent: USER_AGENT,
        countDisabled: (cause) => metrics.subscriptionDisabled(cause),
        forward: config.webhooks.forward,
      }),
      receiverAnswers: receiverAnswers(policy),
      openapi: represent(JSON.stringify(description)),
      self: () => ({
        host: new URL(http.url).hostname.replace(/^\[|\]$/g, ''),
        port: Number(new URL(http.url).port),
        baseUrl,
      }),
    };
    for (const [kind, handler] of handlers) app.inbox.on(kind, handler);
    // Said once here, never per request: an anonymous sender must not be able to flood the log.
    for (const line of missingSecretLines(webhookSources, webhookSecrets)) log('warn', line);
    for (const line of shortSecretLines(webhookSources, webhookSecrets)) log('warn', line);
    lifecycle.add(readCaches(app.pages, app.indexes));
    lifecycle.add(app.inbox.queue);
    lifecycle.add(app.outbox.queue);
    http.use(createHandler(app, apiKeys, cors.policy, table));
    lifecycle.add(http);
    await lifecycle.start();
    return { url: http.url, store, webhooks: app.inbox, close: () => lifecycle.stop() };
  } catch (error) {
    // Release the port and the data dir (its lock) when anything after binding fails.
    await lifecycle.stop();
    await http.drain();
    await http.close();
    throw error;
  }
}

/**
 * Forwarding (CONVENTIONS.md#forwarding): refused when its URL reaches this server itself (the events
 * would come back to its own receiver, as duplicates, and never reach the app); said once at start.
 * Asked before the store opens, so a refused start leaves no data dir behind.
 */
async function checkForward(
  url: string | undefined,
  listening: string,
  baseUrl: string | undefined,
  log: Logger,
): Promise<void> {
  if (url === undefined) return;
  const { hostname, port } = new URL(listening);
  const host = hostname.replace(/^\[|\]$/g, '');
  if (await pointsAtSelf(url, { host, port: Number(port), baseUrl: (baseUrl ?? '').replace(/\/+$/, '') })) {
    throw new Error(`webhooks.forward (${url}) reaches this server itself: forward to the app's own address`);
  }
  // Without the query, which may hold a token of the app's.
  const { origin, pathname } = new URL(url);
  log('info', 'every accepted webhook event is forwarded', { to: `${origin}${pathname}` });
}

/**
 * The seed, read and checked before the store opens, when the store will be new (memory, or a data
 * dir that does not exist yet): a bad seed then refuses the start without creating the data dir. An
 * existing store is opened first instead, and its seed is read only if it is still empty.
 */
async function readNewStoreSeed(
  options: StartOptions,
  path: string,
  clock: Clock,
  collectionConfigOf: (name: string) => CollectionConfig | undefined,
): Promise<SeedData | undefined> {
  const fresh =
    options.store === undefined &&
    (options.memory === true || options.dataDir === undefined || !(await dataDirExists(options.dataDir)));
  if (!fresh) return undefined;
  const read = await readSeed(path, clock);
  if (!read.ok) throw new Error(read.message);
  const refused = checkSeed(read.data, (mutation) => changeProblem(mutation, collectionConfigOf));
  if (refused !== undefined) throw new Error(refused);
  return read.data;
}

function handlersOf(handlers: StartOptions['webhookHandlers']): [string, WebhookHandler][] {
  if (handlers === undefined) return [];
  if (typeof handlers !== 'object' || handlers === null || Array.isArray(handlers)) {
    throw new TypeError('webhookHandlers: must be an object of event kinds to functions');
  }
  const entries = Object.entries(handlers);
  for (const [kind, handler] of entries) {
    if (typeof handler !== 'function') {
      throw new TypeError(`webhookHandlers: the handler for ${JSON.stringify(kind)} must be a function`);
    }
  }
  return entries;
}

function listenerTimeouts(
  options: StartOptions,
): { drainTimeoutMs?: number; headersTimeoutMs?: number; requestTimeoutMs?: number } {
  return {
    ...(options.drainTimeoutMs === undefined ? {} : { drainTimeoutMs: options.drainTimeoutMs }),
    ...(options.headersTimeoutMs === undefined ? {} : { headersTimeoutMs: options.headersTimeoutMs }),
    ...(options.requestTimeoutMs === undefined ? {} : { requestTimeoutMs: options.requestTimeoutMs }),
  };
}

async function openStore(
  options: StartOptions,
  clock: Clock,
  random: Random,
  log: Logger,
  observer: StoreObserver,
): Promise<Store> {
  if (options.store !== undefined) return options.store;
  if (options.memory === true || options.dataDir === undefined) return new MemoryStore({ clock, log });
  const opened = await openFileStore({ dir: options.dataDir, clock, random, log, observer });
  if (!opened.ok) throw new Error(opened.message);
  return opened.store;
}

/**
 * The page cache and the equality indexes in the lifecycle: they stop following the store's commits on
 * close.
 */
function readCaches(pages: PageCache, indexes: EqualityIndexes): Component {
  return {
    name: 'read caches',
    start: async () => {},
    drain: async () => {},
    close: async () => {
      pages.close();
      indexes.close();
    },
  };
}

/** The store in the lifecycle: already open (recovered) when added, flushed and released on close. */
function storeComponent(store: Store): Component {
  return { name: 'store', start: async () => {}, drain: async () => {}, close: () => store.close() };
}

/**
 * The HMAC key of `$skiptoken`s (CONVENTIONS.md#skip-tokens): made on first start and kept in the store, so links
 * survive a restart; with --memory it is new in every process.
 */
async function pagingKeyOf(store: Store, writer: Writer, random: Random): Promise<Buffer> {
  const stored = store.get(KEY_SPACE, PAGING_KEY)?.doc['key'];
  if (typeof stored === 'string') return Buffer.from(stored, 'base64');
  const key = random.bytes(PAGING_KEY_BYTES);
  const result = await writer.write([
    {
      kind: 'put',
      collection: KEY_SPACE,
      id: PAGING_KEY,
      doc: { key: key.toString('base64') },
      expect: { absent: true },
    },
  ]);
  if (!result.ok) throw new Error(`cannot store the paging key (${result.reason})`);
  return key;
}

/**
 * The configuration among start()'s options. An unknown key is refused naming every key start() knows,
 * its own and the configuration's (CONVENTIONS.md#configuration-file): a JavaScript caller who wrote
 * `prot` sees `port` in the list, not only the configuration's keys.
 */
function configOf(options: StartOptions): Config {
  // fromEntries defines own properties, so a "__proto__" key reaches the parser as a key (refused there).
  const fileKeys = Object.fromEntries(Object.entries(options).filter(([key]) => !Object.hasOwn(RUNTIME_KEYS, key)));
  const parsed = parseConfig(fileKeys);
  if (parsed.ok) return parsed.config;
  // Only the parser knows the configuration's keys: asked about each top-level key alone, it says
  // which one it does not know.
  for (const key of Object.keys(fileKeys)) {
    const alone = parseConfig({ [key]: undefined });
    if (alone.ok) continue;
    const known = [...Object.keys(RUNTIME_KEYS), ...Object.keys(DEFAULT_CONFIG)];
    const meant = closest(key, known);
    const hint = meant === undefined ? '' : ` (did you mean ${meant}?)`;
    throw new TypeError(`start(): ${alone.key} is not a known key${hint}; known keys: ${known.join(', ')}`);
  }
  throw new TypeError(`start(): ${parsed.message}`);
}

/** The known key fewest edits away from `key`, if it is at most MAX_SUGGESTION_EDITS away. */
function closest(key: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestEdits = MAX_SUGGESTION_EDITS + 1;
  for (const candidate of known) {
    const edits = editDistance(key.toLowerCase(), candidate.toLowerCase());
    if (edits < bestEdits) [best, bestEdits] = [candidate, edits];
  }
  return best;
}

/** Levenshtein distance (insertions, deletions, substitutions), one row at a time. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1);
      row.push(Math.min((previous[j] as number) + 1, (row[j - 1] as number) + 1, substitution));
    }
    previous = row;
  }
  return previous[b.length] as number;
}
