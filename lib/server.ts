// start(): the embeddable server (CONTRACT §1 "Library"). It wires a store, the request pipeline and a
// node:http server, and owns the shutdown order: stop accepting, let in-flight requests finish (up to
// the drain timeout), then close the store so that every acknowledged write is flushed.
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { parseConfig, type Config } from './config.js';
import { createHandler } from './app.js';
import { ApiKeys } from './http/auth.js';
import { problem, problemBody } from './protocol/problem.js';
import { stderrLogger, type Logger } from './log.js';
import { RepresentationCache } from './resources/representation.js';
import type { App } from './resources/context.js';
import { MemoryStore } from './store/memory.js';
import { openFileStore } from './store/file.js';
import type { Store } from './store/types.js';
import { loadSeed } from './seed.js';
import { FieldIndex } from './query/fields.js';

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
  /** Risky-deploy mode: every response says Cache-Control: no-cache, no-store (seed rule 6). */
  readonly noCacheMode?: boolean;
  /** A folder of JSON arrays or a db.json loaded into a store that is still empty. */
  readonly seed?: string;
  readonly apiKeys?: readonly string[];
  readonly now?: () => number;
  readonly log?: Logger;
  /** How long close() waits for in-flight requests before cutting connections. Default 10 s. */
  readonly drainTimeoutMs?: number;
  /** Time allowed for a request's header section (default 10 s) and for the whole request (60 s). */
  readonly headersTimeoutMs?: number;
  readonly requestTimeoutMs?: number;
}

export type StartOptions = RuntimeOptions & Readonly<Record<string, unknown>>;

export interface ResapiServer {
  /** http://host:port of the listening server. */
  readonly url: string;
  readonly store: Store;
  close(): Promise<void>;
}

const RUNTIME_KEYS = new Set([
  'host', 'port', 'dataDir', 'memory', 'store', 'baseUrl', 'noCacheMode', 'seed', 'apiKeys', 'now', 'log', 'drainTimeoutMs', 'headersTimeoutMs', 'requestTimeoutMs',
]);
const DEFAULT_DRAIN_MS = 10_000;
const KEY_SPACE = '$keys';
const PAGING_KEY = 'paging';

// Slow or oversized headers must not hold a connection or memory (issue: "oversized or slow headers").
const HEADERS_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 60_000;
const KEEP_ALIVE_TIMEOUT_MS = 5_000;
/** How often Node checks the two timeouts above (its default, 30 s, would let a slow client linger). */
const TIMEOUT_CHECK_MS = 1_000;
const MAX_HEADER_BYTES = 16 * 1024;

export async function start(options: StartOptions = {}): Promise<ResapiServer> {
  const config = configOf(options);
  const now = options.now ?? Date.now;
  const log = options.log ?? stderrLogger(now);
  const store = await openStore(options, now, log);
  try {
    return await serve(store, config, options, now, log);
  } catch (error) {
    // Release the data dir (its lock) when anything after opening the store fails, e.g. the port is taken.
    await store.close();
    throw error;
  }
}

async function openStore(options: StartOptions, now: () => number, log: Logger): Promise<Store> {
  if (options.store !== undefined) return options.store;
  if (options.memory === true || options.dataDir === undefined) return new MemoryStore({ clock: { now, setTimer: () => ({ cancel: () => {} }) } });
  const opened = await openFileStore({ dir: options.dataDir, log });
  if (!opened.ok) throw new Error(opened.message);
  return opened.store;
}

async function serve(store: Store, config: Config, options: StartOptions, now: () => number, log: Logger): Promise<ResapiServer> {
  if (options.seed !== undefined) {
    const seeded = await loadSeed(store, options.seed, now);
    if (!seeded.ok) throw new Error(seeded.message);
    if (seeded.loaded > 0) log('info', 'seed loaded', { path: options.seed, items: seeded.loaded });
  }
  const apiKeys = new ApiKeys(options.apiKeys ?? []);
  const pagingKey = await pagingKeyOf(store);
  const fields = new FieldIndex(
    (name) => (Object.hasOwn(config.collections, name) ? config.collections[name]?.schema : undefined),
    (name) => store.scan(name),
  );
  store.watch((commit) => fields.observe(commit));
  const app: App = {
    store,
    config,
    policy: {
      noCacheMode: options.noCacheMode === true,
      credentialed: apiKeys.enabled,
      perCollection: (name) => (Object.hasOwn(config.collections, name) ? config.collections[name]?.cacheControl : undefined),
    },
    representations: new RepresentationCache(),
    log,
    now,
    baseUrl: (options.baseUrl ?? '').replace(/\/+$/, ''),
    keysInFlight: new Set(),
    pagingKey,
    fields,
  };
  const server = createServer(
    {
      maxHeaderSize: MAX_HEADER_BYTES,
      requestTimeout: options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS,
      headersTimeout: options.headersTimeoutMs ?? HEADERS_TIMEOUT_MS,
      keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
      connectionsCheckingInterval: TIMEOUT_CHECK_MS,
    },
    createHandler(app, apiKeys),
  );
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => answerClientError(error, socket));
  await listen(server, options.port ?? 3000, options.host ?? '127.0.0.1');
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const drainMs = options.drainTimeoutMs ?? DEFAULT_DRAIN_MS;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${host}:${address.port}`,
    store,
    close: () => (closing ??= shutdown(server, store, drainMs)),
  };
}

/**
 * The HMAC key of `$skiptoken`s (CONTRACT §5): made on first start and kept in the store, so links
 * survive a restart; with --memory it is new in every process.
 */
async function pagingKeyOf(store: Store): Promise<Buffer> {
  const stored = store.get(KEY_SPACE, PAGING_KEY)?.doc['key'];
  if (typeof stored === 'string') return Buffer.from(stored, 'base64');
  const key = randomBytes(32);
  const result = await store.commit({ mutations: [{ kind: 'put', collection: KEY_SPACE, id: PAGING_KEY, doc: { key: key.toString('base64') }, expect: { absent: true } }] });
  if (!result.ok) throw new Error(`cannot store the paging key (${result.reason})`);
  return key;
}

function configOf(options: StartOptions): Config {
  const fileKeys: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(options)) if (!RUNTIME_KEYS.has(key)) fileKeys[key] = value;
  const parsed = parseConfig(fileKeys);
  if (!parsed.ok) throw new TypeError(`start(): ${parsed.message}`);
  return parsed.config;
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.removeListener('error', reject);
      resolve();
    });
  });
}

async function shutdown(server: Server, store: Store, drainMs: number): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const timer = setTimeout(() => server.closeAllConnections(), drainMs);
  timer.unref();
  await closed;
  clearTimeout(timer);
  await store.close();
}

/**
 * Errors Node's parser raises before a request exists (malformed request line, headers over
 * maxHeaderSize, headers too slow): answered as problems too, then the connection is closed,
 * which RFC 9112 §9.6 permits after such an error.
 */
function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  if (!socket.writable || error.code === 'ECONNRESET') {
    socket.destroy();
    return;
  }
  const p =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? problem('header-fields-too-large', `The request header section exceeds ${MAX_HEADER_BYTES} bytes.`)
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? problem('request-timeout', 'The request was not received in time.')
        : problem('bad-request', 'The request is not valid HTTP/1.1.');
  const body = problemBody(p);
  socket.end(
    `HTTP/1.1 ${p.status} ${p.title}\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n${body}`,
  );
}
