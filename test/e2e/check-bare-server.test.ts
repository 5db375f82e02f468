// `resapi check` (CONVENTIONS.md#conformance-checker) against the server people write first, by hand,
// Express-style: collections as bare arrays, no ETags and no conditional requests, PUT that upserts
// with 200, POST that answers 201 without Location, errors as {"error": "..."}, Express's own HTML
// 404 for a route it lacks, a 100 kB body limit. The checker must fail it a handful of times, once per
// rule it breaks on its own, and report the rest BLOCKED by one of those failures or SKIPped with a
// reason: the FAIL ids are pinned, so a check that starts failing again for a cause already reported
// (a cascade) fails this test.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CheckReport } from '../../lib/check/run.js';
import { runBinary } from '../support/binary.js';

/** express.json()'s default limit: a larger declared body is refused before it is read. */
const BODY_LIMIT = 100 * 1024;

/** The checks this server fails, each for a rule of its own. */
const FAILS = [
  // PUT upserts: 200, no ETag.
  'resources/put-create',
  // A bare array.
  'resources/envelope',
  // PUT with If-Match on an item that does not exist creates it.
  'conditional/if-match-absent',
  // 201 without Location.
  'idempotence/post-create',
  // {"error": "..."} as application/json.
  'errors/problem-document',
  // A body that is not an object, a number JSON cannot carry, text/plain: all stored.
  'errors/not-an-object',
  'errors/id-mismatch',
  'errors/inexact-number',
  // No X-Request-Id on an error.
  'errors/request-id',
  'errors/unsupported-media-type',
];

/**
 * An Express-style server of items in memory: what a tutorial ends with. POST makes its own ids, or,
 * with `keepsIds`, keeps the one the body carries (as json-server 0.17 does).
 */
class HandWrittenServer {
  constructor(private readonly keepsIds = false) {}
  private readonly collections = new Map<string, Map<string, Record<string, unknown>>>();
  private readonly server: Server = createServer((req, res) => void this.handle(req, res));
  private next = 1;
  url = '';

  async start(): Promise<void> {
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): void {
    this.server.closeAllConnections();
    this.server.close();
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = req.method ?? 'GET';
    const parts = new URL(req.url ?? '/', 'http://hand.invalid').pathname.split('/').filter((part) => part !== '');
    const json = (status: number, value?: unknown): void => {
      res.writeHead(status, value === undefined ? {} : { 'Content-Type': 'application/json; charset=utf-8' });
      res.end(value === undefined ? undefined : JSON.stringify(value));
    };
    if (Number(req.headers['content-length'] ?? 0) > BODY_LIMIT) {
      res.shouldKeepAlive = false;
      return json(413, { error: 'request entity too large' });
    }
    let text = '';
    for await (const chunk of req) text += String(chunk);
    let body: Record<string, unknown> = {};
    if (/^application\/json/i.test(req.headers['content-type'] ?? '') && text !== '') {
      try {
        body = JSON.parse(text) as Record<string, unknown>;
      } catch {
        return json(400, { error: 'invalid JSON' });
      }
    }
    const [name, id] = parts;
    const items = name === undefined ? undefined : this.collectionNamed(name);
    if (items === undefined || parts.length > 2) return json(404, { error: 'not found' });
    if (id === undefined && method === 'GET') return json(200, [...items.values()]);
    if (id === undefined && method === 'POST') {
      const given = this.keepsIds && typeof body['id'] === 'string' ? body['id'] : undefined;
      const item = { ...body, id: given ?? String(this.next++) };
      items.set(item.id, item);
      return json(201, item);
    }
    if (id !== undefined && method === 'GET') {
      const item = items.get(id);
      return item === undefined ? json(404, { error: 'not found' }) : json(200, item);
    }
    if (id !== undefined && method === 'PUT') {
      const item = { ...body, id };
      items.set(id, item);
      return json(200, item);
    }
    if (id !== undefined && method === 'DELETE') {
      return items.delete(id) ? json(204) : json(404, { error: 'not found' });
    }
    // Express answers a route it does not have with its own page.
    res.writeHead(404, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end(`<!DOCTYPE html>\n<html><body><pre>Cannot ${method} ${req.url ?? '/'}</pre></body></html>\n`);
  }

  private collectionNamed(name: string): Map<string, Record<string, unknown>> {
    let items = this.collections.get(name);
    if (items === undefined) {
      items = new Map();
      this.collections.set(name, items);
    }
    return items;
  }
}

describe('resapi check against a hand-written server with bare arrays and no ETags', () => {
  const server = new HandWrittenServer();
  before(() => server.start());
  after(() => server.close());

  it('should fail a handful of checks, each for its own rule, and block or skip the rest with a reason', async () => {
    const { code, stdout, stderr } = await runBinary(['check', server.url, '--json']);
    assert.equal(code, 1, stderr);
    const report = JSON.parse(stdout) as CheckReport;
    const failed = report.outcomes.filter((outcome) => outcome.verdict === 'FAIL');
    assert.deepEqual(failed.map((outcome) => outcome.id), FAILS, failed.map((outcome) => `${outcome.id}: ${outcome.detail ?? ''}`).join('\n'));
    for (const outcome of report.outcomes.filter((each) => each.verdict === 'BLOCKED')) {
      assert.ok(FAILS.includes(outcome.blockedBy ?? ''), `${outcome.id} blocked by ${String(outcome.blockedBy)}`);
    }
    for (const outcome of report.outcomes.filter((each) => each.verdict === 'SKIP')) {
      assert.match(outcome.detail ?? '', /\w/, `${outcome.id} is skipped without a reason`);
    }
    const { pass, fail, blocked, skip } = report.summary;
    assert.equal(fail, FAILS.length);
    assert.ok(blocked > 4 * fail, `${blocked} blocked for ${fail} failures`);
    assert.equal(pass + fail + blocked + skip, report.outcomes.length);
    assert.deepEqual(report.leftBehind, []);
  });
});

describe('resapi check making its listing on a server whose PUT cannot create', () => {
  const keeping = new HandWrittenServer(true);
  const assigning = new HandWrittenServer(false);
  before(async () => {
    await keeping.start();
    await assigning.start();
  });
  after(() => {
    keeping.close();
    assigning.close();
  });

  const only = ['--json', '--only', 'paging/listing,paging/default-page-size,paging/orderby'];

  it('should POST the listing with its ids, and judge the paging checks on it', async () => {
    const report = JSON.parse((await runBinary(['check', keeping.url, ...only])).stdout) as CheckReport;
    const verdicts = Object.fromEntries(report.outcomes.map((outcome) => [outcome.id, outcome.verdict]));
    assert.deepEqual(verdicts, {
      'resources/put-create': 'FAIL',
      // Asked about by the paging checks, to read a bare array as a page: reported, once.
      'resources/envelope': 'FAIL',
      'paging/listing': 'PASS',
      // 12 items as a bare array, no "@nextLink": the page holds them all.
      'paging/default-page-size': 'PASS',
      'paging/orderby': 'FAIL',
    });
    assert.deepEqual(report.leftBehind, []);
  });

  it('should block the listing by the create check when POST does not keep the ids either', async () => {
    const report = JSON.parse((await runBinary(['check', assigning.url, ...only])).stdout) as CheckReport;
    const listing = report.outcomes.find((outcome) => outcome.id === 'paging/listing');
    assert.equal(listing?.verdict, 'BLOCKED');
    assert.equal(listing?.blockedBy, 'resources/put-create');
    assert.equal(report.outcomes.find((outcome) => outcome.id === 'paging/orderby')?.blockedBy, 'resources/put-create');
    assert.deepEqual(report.leftBehind, []);
  });
});
