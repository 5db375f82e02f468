// `resapi check` (CONVENTIONS.md#conformance-checker) against deliberately broken servers: resapi on
// 127.0.0.1 port 0 behind a proxy written here that breaks exactly one rule (no ETag on a GET, a stale
// If-Match taken, a 201 without Location, a "@nextLink" that skips an item, a receiver that takes a
// bad signature…). Each variant declares the checks it must fail; the run must fail exactly those,
// every BLOCKED check must name one of them, and nothing else may change: a variant that breaks more
// than its rule is a cascade in the checker (one cause reported twice, or a check that depends on
// something it does not declare). A pass-through proxy first shows the proxy itself breaks nothing.
// The whole catalogue runs each time, with an API key and the receiver's secret, so nothing is skipped.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { checkCatalogue } from '../../lib/check/checks.js';
import { runChecks, type CheckReport } from '../../lib/check/run.js';
import { webhookSignature } from '../../lib/protocol/signature.js';
import { serverForSuite } from '../support/server.js';

const API_KEY = 'variants-key';
const SECRET = 'variants-secret';
/** Requests whose declared body is larger are piped through untouched (a cap check sends 1 MiB and more). */
const PIPE_OVER = 64 * 1024;

/** Header fields by lowercase name, each received line kept (a field sent twice stays twice). */
type Fields = Record<string, string[]>;

/** A request as the proxy received it (its body whole). */
interface Sent {
  readonly method: string;
  /** The request target: path and query. */
  readonly target: string;
  readonly fields: Fields;
  readonly body: Buffer;
}

/** An answer, from resapi or made by the proxy. */
interface Answer {
  readonly status: number;
  readonly fields: Fields;
  readonly body: Buffer;
  /** Bytes written after the header section even where no content belongs (a 304 with a body). */
  readonly forcedBody?: Buffer;
}

type Forward = (sent: Sent) => Promise<Answer>;

interface Variant {
  /** What the server gets wrong, in a few words. */
  readonly name: string;
  /** The checks that must fail, and only these. */
  readonly fails: readonly string[];
  /** Answers one request, usually by forwarding it (changed) and changing the answer. */
  handle(sent: Sent, forward: Forward): Promise<Answer>;
}

function field(fields: Fields, name: string): string | undefined {
  return fields[name]?.join(', ');
}

function without<T extends Record<string, unknown>>(fields: T, ...names: string[]): T {
  const kept: T = { ...fields };
  for (const name of names) delete kept[name];
  return kept;
}

function pathOf(target: string): string {
  return new URL(target, 'http://proxy.invalid').pathname;
}

/** `/{collection}/{id}`: an item (not `$bulk`, `$queries`, a collection or the receiver). */
function isItem(target: string): boolean {
  const parts = pathOf(target).split('/').filter((part) => part !== '');
  return parts.length === 2 && !parts.some((part) => part.startsWith('$')) && parts[0] !== 'webhooks';
}

function jsonOf(answer: Answer): unknown {
  try {
    return JSON.parse(answer.body.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

function withJson(answer: Answer, value: unknown): Answer {
  return { ...answer, body: Buffer.from(JSON.stringify(value)) };
}

function problem(status: number, detail: string): Answer {
  const body = { type: 'about:blank', title: 'Bad Request', status, detail };
  return {
    status,
    fields: { 'content-type': ['application/problem+json'], 'cache-control': ['no-store'], 'x-request-id': ['proxy'] },
    body: Buffer.from(JSON.stringify(body)),
  };
}

/** A delivery to the receiver (resapi's scheme, at /webhooks). */
function isDelivery(sent: Sent): boolean {
  return sent.method === 'POST' && pathOf(sent.target) === '/webhooks';
}

/** The delivery as resapi's provider would sign it: one X-Signature over the exact body. */
function signedCorrectly(sent: Sent): Sent {
  return { ...sent, fields: { ...sent.fields, 'x-signature': [webhookSignature(sent.body, SECRET)] } };
}

/**
 * Pages a collection the way a server with an off-by-one in its continuation does: resapi gives every
 * match (filter, order, $top and $count applied) and the proxy cuts pages of the size asked for, but
 * the "@nextLink" of each page starts one item past where the page ended, so one item per page is
 * never listed. Continuation tokens are the proxy's own, refused (400) when altered or used elsewhere.
 */
function skippingPager(): Variant['handle'] {
  const tokens = new Map<string, { collection: string; items: unknown[]; from: number; size: number }>();
  const serve = (collection: string, items: unknown[], from: number, size: number, extra: object): Answer => {
    const value = items.slice(from, from + size);
    const next = from + size + 1;
    const fields: Fields = {
      'content-type': ['application/json'],
      'cache-control': ['max-age=0, must-revalidate'],
      vary: ['Accept, Prefer'],
      'preference-applied': [`maxpagesize=${size}`],
    };
    const body: Record<string, unknown> = { ...extra, value };
    if (next < items.length) {
      const token = `p${randomBytes(8).toString('hex')}`;
      tokens.set(token, { collection, items, from: next, size });
      body['@nextLink'] = `${collection}?$skiptoken=${token}`;
      fields['link'] = [`<${String(body['@nextLink'])}>; rel="next"`];
    }
    const bytes = Buffer.from(JSON.stringify(body));
    fields['etag'] = [`"${createHash('sha256').update(bytes).digest('base64url').slice(0, 22)}"`];
    return { status: 200, fields, body: bytes };
  };
  return async (sent, forward) => {
    const url = new URL(sent.target, 'http://proxy.invalid');
    const collection = url.pathname;
    const listing = sent.method === 'GET' && collection.split('/').filter((part) => part !== '').length === 1;
    if (!listing) return forward(sent);
    const token = url.searchParams.get('$skiptoken');
    if (token !== null) {
      const page = tokens.get(token);
      if (page === undefined || page.collection !== collection) return problem(400, 'not a $skiptoken of this collection');
      return serve(collection, page.items, page.from, page.size, {});
    }
    const size = Number(/maxpagesize=(\d+)/.exec(field(sent.fields, 'prefer') ?? '')?.[1] ?? 'NaN');
    if (!(size < 1000)) return forward(sent);
    const all = await forward({ ...sent, fields: { ...sent.fields, prefer: ['maxpagesize=1000'] } });
    const whole = jsonOf(all) as { value?: unknown[]; '@count'?: number } | undefined;
    if (all.status !== 200 || !Array.isArray(whole?.value)) return all;
    const extra = whole['@count'] === undefined ? {} : { '@count': whole['@count'] };
    return serve(collection, whole.value, 0, size, extra);
  };
}

const VARIANTS: readonly Variant[] = [
  {
    name: 'no ETag on the GET of an item',
    fails: ['resources/get-item'],
    async handle(sent, forward) {
      const answer = await forward(sent);
      const read = (sent.method === 'GET' || sent.method === 'HEAD') && isItem(sent.target) && answer.status === 200;
      return read ? { ...answer, fields: without(answer.fields, 'etag') } : answer;
    },
  },
  {
    name: 'a PUT with a stale If-Match is taken (200, not 412)',
    fails: ['conditional/if-match-stale'],
    async handle(sent, forward) {
      const tag = field(sent.fields, 'if-match');
      if (sent.method !== 'PUT' || tag === undefined || tag === '*' || tag.includes(',') || tag.startsWith('W/')) {
        return forward(sent);
      }
      const current = await forward({ method: 'GET', target: sent.target, fields: without(sent.fields, 'if-match', 'content-type'), body: Buffer.alloc(0) });
      const etag = field(current.fields, 'etag');
      if (current.status !== 200 || etag === undefined) return forward(sent);
      return forward({ ...sent, fields: { ...sent.fields, 'if-match': [etag] } });
    },
  },
  {
    name: 'a 201 without Location',
    fails: ['conditional/create', 'idempotence/post-create'],
    async handle(sent, forward) {
      const answer = await forward(sent);
      return answer.status === 201 ? { ...answer, fields: without(answer.fields, 'location') } : answer;
    },
  },
  {
    name: 'a "@nextLink" that skips an item',
    fails: ['paging/next-link-walk'],
    handle: skippingPager(),
  },
  {
    name: 'weak ETags where strong ones are required (and compared weakly)',
    // Items and pages are both tagged weakly: two rules broken. If-Match's comparison is not judged.
    fails: ['conditional/strong-item-etag', 'caching/page-etag'],
    async handle(sent, forward) {
      const strong = (list: string[] | undefined): string[] | undefined => list?.map((value) => value.replace(/W\//g, ''));
      const fields = { ...sent.fields };
      for (const name of ['if-match', 'if-none-match']) {
        const value = strong(fields[name]);
        if (value !== undefined) fields[name] = value;
      }
      const answer = await forward({ ...sent, fields });
      const etag = field(answer.fields, 'etag');
      return etag === undefined || etag.startsWith('W/') ? answer : { ...answer, fields: { ...answer.fields, etag: [`W/${etag}`] } };
    },
  },
  {
    name: 'a 304 carrying a body',
    fails: ['conditional/not-modified-headers'],
    async handle(sent, forward) {
      const answer = await forward(sent);
      return answer.status === 304 ? { ...answer, forcedBody: Buffer.from('{"stale":"copy"}') } : answer;
    },
  },
  {
    name: 'a 304 without the ETag',
    fails: ['conditional/not-modified-headers'],
    async handle(sent, forward) {
      const answer = await forward(sent);
      return answer.status === 304 ? { ...answer, fields: without(answer.fields, 'etag') } : answer;
    },
  },
  {
    name: 'problems sent as application/json',
    fails: ['errors/problem-document'],
    async handle(sent, forward) {
      const answer = await forward(sent);
      const type = field(answer.fields, 'content-type') ?? '';
      return type.startsWith('application/problem+json') ? { ...answer, fields: { ...answer.fields, 'content-type': ['application/json'] } } : answer;
    },
  },
  {
    name: 'no Vary: Prefer on collection pages',
    fails: ['caching/collection-vary-prefer'],
    async handle(sent, forward) {
      const answer = await forward(sent);
      const vary = answer.fields['vary'];
      if (vary === undefined || isItem(sent.target)) return answer;
      const kept = vary.join(', ').split(',').map((name) => name.trim()).filter((name) => name.toLowerCase() !== 'prefer');
      return { ...answer, fields: kept.length === 0 ? without(answer.fields, 'vary') : { ...answer.fields, vary: [kept.join(', ')] } };
    },
  },
  {
    name: 'a second DELETE of the same item answers 404',
    fails: ['resources/delete-idempotent'],
    handle: (() => {
      const deleted = new Set<string>();
      return async (sent: Sent, forward: Forward): Promise<Answer> => {
        if (sent.method === 'PUT' && !pathOf(sent.target).endsWith('/$undoDelete')) deleted.delete(pathOf(sent.target));
        if (sent.method !== 'DELETE') return forward(sent);
        if (deleted.has(pathOf(sent.target))) return problem(404, 'no such item');
        const answer = await forward(sent);
        if (answer.status < 300) deleted.add(pathOf(sent.target));
        return answer;
      };
    })(),
  },
  {
    name: 'Idempotency-Key ignored',
    fails: ['idempotence/post-key-replayed'],
    handle: (sent, forward) => forward({ ...sent, fields: without(sent.fields, 'idempotency-key') }),
  },
  {
    name: 'a stack trace in the detail of a 400',
    fails: ['errors/no-internal-details'],
    async handle(sent, forward) {
      const answer = await forward(sent);
      const body = jsonOf(answer) as Record<string, unknown> | undefined;
      if (answer.status !== 400 || typeof body?.['detail'] !== 'string') return answer;
      return withJson(answer, { ...body, detail: `${body['detail']}\n    at parse (/app/server.js:41:13)` });
    },
  },
  {
    name: 'a receiver that takes a wrong signature',
    fails: ['webhooks/wrong-signature'],
    async handle(sent, forward) {
      // Any X-Signature present is taken as valid: the delivery reaches resapi signed correctly.
      const signed = isDelivery(sent) && sent.fields['x-signature'] !== undefined;
      return forward(signed ? signedCorrectly(sent) : sent);
    },
  },
  {
    name: 'a receiver that records an event before verifying its signature',
    fails: ['webhooks/wrong-signature'],
    async handle(sent, forward) {
      const answer = await forward(sent);
      // The event is recorded (as a correctly signed copy would be) and then refused.
      if (isDelivery(sent) && answer.status === 401) await forward(signedCorrectly(sent));
      return answer;
    },
  },
  {
    name: 'a receiver without deduplication',
    fails: ['webhooks/duplicate'],
    async handle(sent, forward) {
      const answer = await forward(sent);
      const body = jsonOf(answer) as Record<string, unknown> | undefined;
      return isDelivery(sent) && body?.['status'] === 'duplicate' ? withJson(answer, { ...body, status: 'accepted' }) : answer;
    },
  },
];

/** Reads a request whole, unless it declares a body over PIPE_OVER (then it is piped, untouched). */
async function received(req: IncomingMessage): Promise<Sent | undefined> {
  if (Number(req.headers['content-length'] ?? 0) > PIPE_OVER) return undefined;
  const fields: Fields = {};
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
    const name = (req.rawHeaders[i] as string).toLowerCase();
    (fields[name] ??= []).push(req.rawHeaders[i + 1] as string);
  }
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return { method: req.method ?? 'GET', target: req.url ?? '/', fields, body: Buffer.concat(chunks) };
}

/** Sends `sent` to resapi and reads its answer whole. */
function forwardTo(origin: URL): Forward {
  return (sent) =>
    new Promise((resolve, reject) => {
      const outgoing = httpRequest({ host: origin.hostname, port: origin.port, method: sent.method, path: sent.target, agent: false });
      for (const [name, values] of Object.entries(without(sent.fields, 'content-length', 'connection', 'transfer-encoding'))) {
        outgoing.setHeader(name, values);
      }
      if (sent.body.length > 0 || sent.fields['content-length'] !== undefined) outgoing.setHeader('content-length', sent.body.length);
      outgoing.on('error', reject);
      outgoing.on('response', (answer) => {
        const fields: Fields = {};
        for (let i = 0; i + 1 < answer.rawHeaders.length; i += 2) {
          const name = (answer.rawHeaders[i] as string).toLowerCase();
          (fields[name] ??= []).push(answer.rawHeaders[i + 1] as string);
        }
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('end', () => resolve({ status: answer.statusCode ?? 502, fields, body: Buffer.concat(chunks) }));
        answer.on('error', reject);
      });
      outgoing.end(sent.body);
    });
}

/** Writes an answer; one with `forcedBody` straight to the socket, as no conforming server would. */
function reply(res: ServerResponse, method: string, answer: Answer): void {
  const fields = without(answer.fields, 'content-length', 'connection', 'keep-alive', 'transfer-encoding');
  if (answer.forcedBody !== undefined) {
    const lines = Object.entries(fields).flatMap(([name, values]) => values.map((value) => `${name}: ${value}`));
    const head = [`HTTP/1.1 ${answer.status} X`, ...lines, `content-length: ${answer.forcedBody.length}`, 'connection: close'];
    res.socket?.end(Buffer.concat([Buffer.from(`${head.join('\r\n')}\r\n\r\n`), answer.forcedBody]));
    return;
  }
  const bodiless = method === 'HEAD' || answer.status === 304 || answer.status === 204;
  const outgoing: Record<string, string[] | string> = { ...fields };
  if (!bodiless) outgoing['content-length'] = String(answer.body.length);
  else if (answer.fields['content-length'] !== undefined) outgoing['content-length'] = answer.fields['content-length'];
  res.writeHead(answer.status, without(outgoing, 'date'));
  res.end(bodiless ? undefined : answer.body);
}

/** A proxy in front of `origin` that answers as `handle` says; closed in after(). */
async function proxy(origin: string, handle: Variant['handle']): Promise<{ url: string; close(): Promise<void> }> {
  const target = new URL(origin);
  const forward = forwardTo(target);
  const server: Server = createServer((req, res) => {
    void (async () => {
      const sent = await received(req);
      if (sent === undefined) {
        const piped = httpRequest({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers, agent: false }, (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        });
        piped.on('error', () => res.destroy());
        // The fields go at once: a request that declares a body it never sends must still be answered.
        piped.flushHeaders();
        req.pipe(piped);
        return;
      }
      reply(res, sent.method, await handle(sent, forward));
    })().catch(() => res.destroy());
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** The whole catalogue through a proxy applying `handle`, credentialed and with the receiver's secret. */
async function gradeThrough(origin: string, handle: Variant['handle']): Promise<CheckReport> {
  const front = await proxy(origin, handle);
  try {
    return await runChecks(front.url, { apiKey: API_KEY, webhookSecret: SECRET });
  } finally {
    await front.close();
  }
}

function ids(report: CheckReport, verdict: string): string[] {
  return report.outcomes.filter((outcome) => outcome.verdict === verdict).map((outcome) => outcome.id);
}

describe('resapi check against resapi with one rule broken', () => {
  const origin = serverForSuite({ memory: true, apiKeys: [API_KEY], webhookSecrets: [SECRET] });

  it('should pass every check through a proxy that changes nothing', async () => {
    const report = await gradeThrough(origin.url, (sent, forward) => forward(sent));
    const wrong = report.outcomes.filter((outcome) => outcome.verdict !== 'PASS');
    assert.deepEqual(wrong.map((outcome) => `${outcome.id}: ${outcome.verdict} ${outcome.detail ?? ''}`), []);
    assert.equal(report.outcomes.length, checkCatalogue().length);
  });

  for (const variant of VARIANTS) {
    it(`should fail exactly ${variant.fails.join(', ')} for ${variant.name}`, async () => {
      const report = await gradeThrough(origin.url, variant.handle.bind(variant));
      const failed = report.outcomes.filter((outcome) => outcome.verdict === 'FAIL');
      assert.deepEqual(
        failed.map((outcome) => outcome.id).sort(),
        [...variant.fails].sort(),
        failed.map((outcome) => `${outcome.id}: ${outcome.detail ?? ''}`).join('\n'),
      );
      for (const outcome of report.outcomes.filter((each) => each.verdict === 'BLOCKED')) {
        assert.ok(variant.fails.includes(outcome.blockedBy ?? ''), `${outcome.id} blocked by ${String(outcome.blockedBy)}`);
      }
      assert.deepEqual(ids(report, 'SKIP'), [], 'nothing is skipped in a run with a key and a secret');
      assert.deepEqual(report.leftBehind, []);
    });
  }
});
