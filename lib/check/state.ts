// What one run of the checker holds (CONVENTIONS.md#conformance-checker): its collections, the ids it
// made, what it stored on the server and removes at the end, and what each check sent and saw (for
// `--verbose`). The run works in a collection of its own, `rcheck-<random>` (or the one `--collection`
// names) and `<that>-list`; every id it makes carries the run's random tag, so it never touches an
// item it did not make. Clean-up removes only what a write of the run was seen to store (a 2xx to a
// PUT or POST in those collections, not since deleted), and says nothing when that was nothing.
import { isJsonObject, type JsonObject } from '../json.js';
import { JSON_BODY, JSON_CREATE_ONLY } from './define.js';
import { expectHeader, expectStatus, seen } from './expect.js';
import { ProbeRefused, type Probe, type ProbeRequest, type ProbeResponse } from './probe.js';
import { transportFailure } from './reach.js';
import { CheckBlocked, CheckFailed, LISTING_ITEMS, listingItem, type MadeItem } from './types.js';

/** One request of a check and its answer, as `--verbose` shows them. */
export interface Exchange {
  readonly method: string;
  /** The path (and query) sent, or the absolute URL. */
  readonly path: string;
  /** The fields the check itself set (not the run's own, such as credentials). */
  readonly headers: Readonly<Record<string, string>>;
  /** The start of the body sent, when there was one. */
  readonly body?: string;
  readonly status?: number;
  /** The answer's fields, but those every answer has (Date, Content-Length, Connection). */
  readonly responseHeaders?: Readonly<Record<string, string>>;
  /** The start of the answer's body. */
  readonly responseBody?: string;
  /** Why no answer came. */
  readonly error?: string;
}

/** Characters of a body kept in an exchange. */
const EXCERPT = 200;
/** Answer fields left out of an exchange: every answer has them, and they say nothing about a rule. */
const ROUTINE_FIELDS = new Set(['date', 'content-length', 'connection', 'keep-alive', 'transfer-encoding']);
/** Request fields whose values are never shown. */
const SECRET_FIELDS = new Set(['authorization', 'cookie', 'proxy-authorization']);

export interface RunSetup {
  /** Random hex, part of every name the run makes. */
  readonly tag: string;
  /** The run's collection (`rcheck-<tag>` unless one was given). */
  readonly collection: string;
  /** Requests the checks may send; the rest is kept for the clean-up. */
  readonly checkBudget: number;
}

export class RunState {
  readonly tag: string;
  readonly collection: string;
  readonly listingCollection: string;
  readonly leftBehind: string[] = [];
  /** Set when a request got no answer (not refused by the probe itself); the engine reads and clears it. */
  transportTrouble = false;
  /** Set when the checks' request budget ran out. */
  budgetSpent = false;
  private readonly stored = new Set<string>();
  private readonly recorders: Exchange[][] = [];
  private listingMade = false;
  private sequence = 0;

  constructor(
    private readonly probe: Probe,
    private readonly setup: RunSetup,
  ) {
    this.tag = setup.tag;
    this.collection = setup.collection;
    this.listingCollection = `${setup.collection}-list`;
  }

  /** Requests sent so far. */
  get requests(): number {
    return this.probe.count;
  }

  /** Starts recording what is sent into a new list (a check's); `stopRecording` ends it. */
  startRecording(): Exchange[] {
    const exchanges: Exchange[] = [];
    this.recorders.push(exchanges);
    return exchanges;
  }

  stopRecording(): void {
    this.recorders.pop();
  }

  async send(request: ProbeRequest): Promise<ProbeResponse> {
    const sent = sentPart(request);
    const record = (exchange: Exchange): void => {
      this.recorders.at(-1)?.push(exchange);
    };
    if (this.probe.count >= this.setup.checkBudget) {
      this.budgetSpent = true;
      const refusal = `not sent: the checks' budget of ${this.setup.checkBudget} requests is spent`;
      record({ ...sent, error: refusal });
      throw new ProbeRefused(refusal);
    }
    let response: ProbeResponse;
    try {
      response = await this.probe.send(request);
    } catch (error) {
      if (!(error instanceof ProbeRefused)) this.transportTrouble = true;
      record({ ...sent, error: error instanceof ProbeRefused ? error.message : transportFailure(error) });
      throw error;
    }
    record({ ...sent, status: response.status, ...seenPart(response) });
    this.noteStored(request, response);
    return response;
  }

  newId(): string {
    return `c${++this.sequence}-${this.tag}`;
  }

  newQueryName(): string {
    return `q${++this.sequence}-${this.tag}`;
  }

  async newItem(fields: JsonObject): Promise<MadeItem> {
    const id = this.newId();
    const path = `/${this.collection}/${id}`;
    const doc: JsonObject = { id, name: `check item ${id}`, price: 10, ...fields };
    const response = await this.send({ method: 'PUT', path, headers: JSON_CREATE_ONLY, body: JSON.stringify(doc) });
    try {
      expectStatus(response, 201);
      return { id, path, etag: expectHeader(response, 'etag'), doc };
    } catch (error) {
      // resources/put-create passed, so this is the server changing its mind within the run.
      if (error instanceof CheckFailed) {
        throw new CheckFailed(`could not create a test item with PUT and If-None-Match: * (${error.seen})`);
      }
      throw error;
    }
  }

  /** The listing collection's name, once made. */
  get listing(): string | undefined {
    return this.listingMade ? this.listingCollection : undefined;
  }

  /**
   * Creates the listing's items with PUT and If-None-Match: *, or with POST to the collection, each
   * carrying its id. A POST that does not keep the id it was sent leaves the listing unmade: the
   * server cannot create with PUT (or the caller would not POST), so the check is blocked by that.
   */
  async makeListing(method: 'PUT' | 'POST'): Promise<string> {
    for (let n = 1; n <= LISTING_ITEMS; n++) {
      const doc = listingItem(n);
      const id = String(doc['id']);
      const path = `/${this.listingCollection}/${id}`;
      const body = JSON.stringify(doc);
      if (method === 'PUT') {
        const response = await this.send({ method, path, headers: JSON_CREATE_ONLY, body });
        if (response.status !== 201) throw new CheckFailed(`PUT ${path} answered ${seen(response)}`);
        continue;
      }
      const response = await this.send({ method, path: `/${this.listingCollection}`, headers: JSON_BODY, body });
      const made = response.status === 200 || response.status === 201 ? this.ownPath(madeAt(response)) : undefined;
      if (made === undefined || !made.endsWith(path)) {
        if (n === 1) throw new CheckBlocked('item');
        throw new CheckFailed(`POST /${this.listingCollection} of "id": "${id}" answered ${seen(response)}`);
      }
    }
    this.listingMade = true;
    return this.listingCollection;
  }

  /** Deletes what the run stored; what cannot be deleted is reported, never retried for ever. */
  async cleanUp(): Promise<void> {
    // Query resources first: a server may refuse to drop what a query still names.
    const query = (path: string): number => (path.includes('/$queries/') ? 0 : 1);
    const paths = [...this.stored].sort((a, b) => query(a) - query(b));
    for (const [index, path] of paths.entries()) {
      try {
        const response = await this.probe.send({ method: 'DELETE', path });
        if (response.status >= 300 && response.status !== 404) {
          this.leftBehind.push(`${path} (DELETE answered ${response.status})`);
        }
      } catch (error) {
        if (error instanceof ProbeRefused) {
          this.leftBehind.push(`${path} (${error.message})`);
          continue;
        }
        // No answer: the server is gone, and every later DELETE would say so again.
        const rest = paths.length - index;
        this.leftBehind.push(`${rest === 1 ? path : `${path} and ${rest - 1} more`} (${transportFailure(error)})`);
        return;
      }
    }
  }

  /** Keeps track of what a request stored in the run's collections, or removed from them. */
  private noteStored(request: ProbeRequest, response: ProbeResponse): void {
    if (response.status < 200 || response.status >= 300) return;
    if (request.method === 'POST') {
      const collection = this.ownPath(request.path, undefined, true);
      const location = response.header('location');
      if (collection === undefined) return;
      const made = location === undefined ? idPath(collection, response) : this.ownPath(location, response.url);
      if (made !== undefined) this.stored.add(made);
      return;
    }
    const path = this.ownPath(request.path);
    if (path === undefined) return;
    if (request.method === 'DELETE') {
      this.stored.delete(path);
    } else if (request.method === 'PUT' && path.endsWith('/$undoDelete')) {
      this.stored.add(path.slice(0, -'/$undoDelete'.length));
    } else if (request.method === 'PUT' && !path.endsWith('/$bulk')) {
      this.stored.add(path);
    }
  }

  /**
   * `target` as the absolute URL of something in the run's collections (the collection itself too,
   * with `collection`), or undefined when it lies elsewhere.
   */
  private ownPath(target: string, base?: string, collection = false): string | undefined {
    let url: URL;
    try {
      url = base === undefined ? this.probe.resolve(target) : new URL(target, base);
    } catch {
      return undefined;
    }
    if (url.origin !== this.probe.origin) return undefined;
    const inside = [this.collection, this.listingCollection].some(
      (name) => url.pathname.includes(`/${name}/`) || (collection && url.pathname.endsWith(`/${name}`)),
    );
    return inside ? url.href : undefined;
  }
}

/** Where a POST's answer says the item it made lives: its Location, else its body's `id` under the URL posted to. */
function madeAt(response: ProbeResponse): string {
  const location = response.header('location');
  if (location !== undefined) return new URL(location, response.url).href;
  return idPath(response.url, response) ?? response.url;
}

/** Where a POST's item lives when the answer names no Location: its `id` under the collection. */
function idPath(collectionUrl: string, response: ProbeResponse): string | undefined {
  const body = response.json();
  const id = isJsonObject(body) ? body['id'] : undefined;
  if (typeof id !== 'string') return undefined;
  const url = new URL(collectionUrl);
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}/${encodeURIComponent(id)}`;
}

function sentPart(request: ProbeRequest): Exchange {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers ?? {})) {
    const text = typeof value === 'string' ? value : value.join(' | ');
    headers[name] = SECRET_FIELDS.has(name.toLowerCase()) ? '(not shown)' : text;
  }
  const body = request.body === undefined ? undefined : excerpt(request.body.toString());
  return { method: request.method, path: request.path, headers, ...(body === undefined ? {} : { body }) };
}

function seenPart(response: ProbeResponse): Pick<Exchange, 'responseHeaders' | 'responseBody'> {
  const responseHeaders: Record<string, string> = {};
  for (const [name, lines] of response.lines) {
    if (!ROUTINE_FIELDS.has(name)) responseHeaders[name] = lines.join(', ');
  }
  return { responseHeaders, ...(response.text === '' ? {} : { responseBody: excerpt(response.text) }) };
}

function excerpt(text: string): string {
  return text.length > EXCERPT ? `${text.slice(0, EXCERPT)}…` : text;
}
