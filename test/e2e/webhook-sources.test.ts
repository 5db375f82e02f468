// End to end: receiving sources (CONVENTIONS.md#receiving-sources), one scheme per path, each signed
// as its providers sign (lib/protocol/scheme-headers.ts). A real server on 127.0.0.1 with a resapi
// default source and Stripe, GitHub and Standard Webhooks sources, on an injected clock:
// - each scheme is accepted through its own path, and a delivery signed for another scheme is refused
//   there (the path picks the scheme, never the header fields);
// - refusals (401, 400, 413, 503) say why, record nothing, and log one line per reason, not per request;
// - dedup is per (source, id): one id on two sources is two events, `<name>:<eventId>` addresses the
//   named one in /$inbox, JSON and HTML, with `source` and `eventId` in every item, old or new;
// - a handler sees ctx.id, kind, source and the provider's header fields, on a retry too;
// - a GitHub form-encoded delivery is decoded to its JSON payload;
// - GET /$openapi describes each source's path with its scheme's header fields;
// and, with the real binary, an accepted event of a named source survives kill -9 and is processed
// after the restart with its source and header fields.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync, readFileSync, existsSync } from 'node:fs';
import { once } from 'node:events';
import { join } from 'node:path';
import type { WebhookSourceConfig } from '../../lib/config.js';
import type { JsonObject } from '../../lib/json.js';
import { signedHeaders } from '../../lib/protocol/scheme-headers.js';
import type { HandlerContext } from '../../lib/webhooks/inbox.js';
import { killIfRunning, startBinary, type RunningServer } from '../support/binary.js';
import { clockAt } from '../support/clock.js';
import { eventually } from '../support/eventually.js';
import { problemOf, request, type TestResponse } from '../support/http.js';
import { serverForSuite, withServer } from '../support/server.js';
import { tempDirsForSuite } from '../support/temp-dir.js';

const NOW_S = 1_776_157_960;
const RESAPI_SECRET = 'resapi-source-secret-0123456789';
const STRIPE_SECRET = 'whsec_stripe_source_secret_0123456789';
const GITHUB_SECRET = "It's a Secret to Everybody";
const STANDARD_SECRET = `whsec_${Buffer.alloc(24, 9).toString('base64')}`;
const SOURCES: readonly WebhookSourceConfig[] = [
  { path: '/webhooks', scheme: 'resapi', secretsEnv: 'RESAPI_WEBHOOK_SECRETS' },
  { path: '/webhooks/stripe', scheme: 'stripe', secretsEnv: 'STRIPE_WEBHOOK_SECRETS' },
  { path: '/webhooks/github', scheme: 'github', secretsEnv: 'GITHUB_WEBHOOK_SECRETS' },
  { path: '/webhooks/svix', scheme: 'standard', secretsEnv: 'SVIX_WEBHOOK_SECRETS' },
  { path: '/webhooks/idle', scheme: 'stripe', secretsEnv: 'IDLE_WEBHOOK_SECRETS' },
];
const HTML_ACCEPT = 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.8';
const ACCEPTED = '{"status":"accepted"}';
const DUPLICATE = '{"status":"duplicate"}';

interface Handled {
  readonly event: JsonObject;
  readonly context: HandlerContext;
}

function post(base: string, path: string, body: string, headers: Record<string, string | string[]>): Promise<TestResponse> {
  return request(base, path, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body });
}

function stripeEvent(id: string, type = 'invoice.paid'): string {
  return JSON.stringify({ id, object: 'event', type, data: { object: { id: 'in_1' } } });
}

function sendStripe(base: string, id: string, extra: Record<string, string> = {}, timestampS = NOW_S): Promise<TestResponse> {
  const body = stripeEvent(id);
  return post(base, '/webhooks/stripe', body, { ...signedHeaders('stripe', STRIPE_SECRET, { id, kind: 'invoice.paid', body, timestampS }), ...extra });
}

function sendResapi(base: string, id: string, kind = 'order.created'): Promise<TestResponse> {
  const body = JSON.stringify({ id, event: kind });
  return post(base, '/webhooks', body, signedHeaders('resapi', RESAPI_SECRET, { id, kind, body, timestampS: NOW_S }));
}

function sendStandard(base: string, id: string, type: string): Promise<TestResponse> {
  const body = JSON.stringify({ type, timestamp: '2026-04-14T09:12:40Z', data: { id: 'c_1' } });
  return post(base, '/webhooks/svix', body, signedHeaders('standard', STANDARD_SECRET, { id, kind: type, body, timestampS: NOW_S }));
}

function sendGithub(base: string, id: string, event: string, payload: JsonObject, form = false): Promise<TestResponse> {
  const json = JSON.stringify(payload);
  const body = form ? `payload=${encodeURIComponent(json)}` : json;
  const headers = signedHeaders('github', GITHUB_SECRET, { id, kind: event, body, timestampS: NOW_S });
  const type = form ? 'application/x-www-form-urlencoded' : 'application/json';
  return post(base, '/webhooks/github', body, { ...headers, 'Content-Type': type, 'User-Agent': 'GitHub-Hookshot/044aadd' });
}

function itemPath(id: string): string {
  return `/$inbox/${encodeURIComponent(id)}`;
}

describe('receiving sources, one scheme per path', () => {
  const handled: Handled[] = [];
  const logged: { message: string; fields: Readonly<Record<string, unknown>> }[] = [];
  let failOnce = true;
  const server = serverForSuite({
    memory: true,
    clock: clockAt(() => NOW_S * 1000 + 250),
    log: (_level, message, fields = {}) => void logged.push({ message, fields }),
    maxBodyBytes: 4096,
    webhooks: { sources: SOURCES, retry: { baseMs: 0, factor: 2, capMs: 0, attempts: 3 } },
    webhookSecrets: { webhooks: [RESAPI_SECRET], stripe: [STRIPE_SECRET], github: [GITHUB_SECRET], svix: [STANDARD_SECRET] },
    webhookHandlers: {
      '*': (event: JsonObject, context: HandlerContext) => void handled.push({ event, context }),
      // Fails its first run, so the retry shows what a handler sees on a later attempt.
      'customer.updated': (event: JsonObject, context: HandlerContext) => {
        if (failOnce) {
          failOnce = false;
          throw new Error('the first run fails');
        }
        handled.push({ event, context });
      },
    },
  });
  const handledOf = (source: string, id: string) =>
    eventually(`the handler of ${source}/${id}`, () => handled.find(({ context }) => context.source === source && context.id === id));

  it('should accept each scheme through its own path and hand its handler the id, kind, source and headers', async () => {
    assert.equal((await sendResapi(server.url, 'evt-r1')).text, ACCEPTED);
    assert.equal((await sendStripe(server.url, 'evt_s1', { 'User-Agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)' })).text, ACCEPTED);
    assert.equal((await sendGithub(server.url, 'gh-1', 'issues', { action: 'opened', issue: { number: 1 } })).text, ACCEPTED);
    assert.equal((await sendStandard(server.url, 'msg_1', 'contact.created')).text, ACCEPTED);

    const resapi = await handledOf('webhooks', 'evt-r1');
    assert.equal(resapi.context.kind, 'order.created');
    assert.equal(resapi.context.headers['x-signature'], undefined, 'the signature field is not handed on');
    const stripe = await handledOf('stripe', 'evt_s1');
    assert.deepEqual([stripe.context.kind, stripe.event['type']], ['invoice.paid', 'invoice.paid']);
    assert.equal(stripe.context.headers['user-agent'], 'Stripe/1.0 (+https://stripe.com/docs/webhooks)');
    assert.equal(stripe.context.headers['stripe-signature'], undefined);
    assert.equal(stripe.context.attempt, 1);
    const github = await handledOf('github', 'gh-1');
    assert.equal(github.context.kind, 'issues.opened');
    assert.equal(github.context.headers['x-github-event'], 'issues');
    assert.equal(github.context.headers['x-hub-signature-256'], undefined);
    const standard = await handledOf('svix', 'msg_1');
    assert.equal(standard.context.kind, 'contact.created');
    assert.equal(standard.context.headers['webhook-id'], 'msg_1');
    assert.equal(standard.context.headers['webhook-signature'], undefined);
  });

  it('should decode a GitHub form-encoded delivery to its JSON payload', async () => {
    const payload = { action: 'created', comment: { body: 'a + b & c = 100%' } };
    assert.equal((await sendGithub(server.url, 'gh-form', 'issue_comment', payload, true)).text, ACCEPTED);
    const seen = await handledOf('github', 'gh-form');
    assert.deepEqual(seen.event, payload);
    assert.equal(seen.context.kind, 'issue_comment.created');
  });

  it('should keep the provider\'s header fields with the event, so a retry sees them too', async () => {
    assert.equal((await sendStandard(server.url, 'msg_retry', 'customer.updated')).text, ACCEPTED);
    const seen = await handledOf('svix', 'msg_retry');
    assert.equal(seen.context.attempt, 2);
    assert.equal(seen.context.headers['webhook-timestamp'], String(NOW_S));
  });

  it('should deduplicate per source: one id on two sources is two events, addressed <name>:<eventId>', async () => {
    assert.equal((await sendResapi(server.url, 'evt_same')).text, ACCEPTED);
    assert.equal((await sendStripe(server.url, 'evt_same')).text, ACCEPTED);
    assert.equal((await sendStripe(server.url, 'evt_same')).text, DUPLICATE);
    assert.equal((await sendResapi(server.url, 'evt_same')).text, DUPLICATE);
    const named = await request(server.url, itemPath('stripe:evt_same'));
    assert.equal(named.status, 200, named.text);
    assert.deepEqual(pick(named.json(), ['id', 'source', 'eventId', 'event']), { id: 'stripe:evt_same', source: 'stripe', eventId: 'evt_same', event: 'invoice.paid' });
    const plain = await request(server.url, itemPath('evt_same'));
    assert.deepEqual(pick(plain.json(), ['id', 'source', 'eventId', 'event']), { id: 'evt_same', source: 'webhooks', eventId: 'evt_same', event: 'order.created' });
    assert.equal((await request(server.url, itemPath('stripe:evt_same'), { headers: { 'If-None-Match': named.headers.etag as string } })).status, 304);
    const html = await request(server.url, itemPath('stripe:evt_same'), { headers: { Accept: HTML_ACCEPT } });
    assert.equal(html.status, 200);
    assert.match(html.text, /stripe:evt_same/);
  });

  it('should list and filter /$inbox by source and eventId, old-style default items included, page after page', async () => {
    const stripeOnly = await request(server.url, "/$inbox?$filter=source eq 'stripe'&$select=id,eventId");
    assert.equal(stripeOnly.status, 200, stripeOnly.text);
    const ids = (stripeOnly.json() as { value: { id: string }[] }).value.map((item) => item.id);
    assert.ok(ids.length >= 2 && ids.every((id) => id.startsWith('stripe:')), ids.join());
    const defaults = (await request(server.url, "/$inbox?$filter=source eq 'webhooks' and eventId eq 'evt_same'")).json() as { value: { id: string }[] };
    assert.deepEqual(defaults.value.map((item) => item.id), ['evt_same']);
    // One item a page: every next link is a signed token holding a <name>:<eventId> key.
    const seen: string[] = [];
    let next: string | undefined = "/$inbox?$filter=source ne 'webhooks'&$orderby=source,eventId";
    while (next !== undefined) {
      const page = await request(server.url, next, { headers: { Prefer: 'maxpagesize=1' } });
      assert.equal(page.status, 200, page.text);
      const envelope = page.json() as { value: { id: string }[]; '@nextLink'?: string };
      seen.push(...envelope.value.map((item) => item.id));
      next = envelope['@nextLink'];
    }
    assert.ok(seen.includes('stripe:evt_same') && seen.includes('github:gh-1') && !seen.includes('evt_same'), seen.join());
    const html = await request(server.url, "/$inbox?$filter=source eq 'stripe'", { headers: { Accept: HTML_ACCEPT } });
    assert.equal(html.status, 200);
    assert.match(html.text, /href="\/\$inbox\/stripe%3Aevt_same"/);
  });

  it('should address a named event whose id has 255 code points, its item id being longer', async () => {
    const id = `evt_${'é'.repeat(251)}`;
    assert.equal((await sendStripe(server.url, id)).text, ACCEPTED);
    const item = await request(server.url, itemPath(`stripe:${id}`));
    assert.equal(item.status, 200, item.text);
    assert.equal((item.json() as { eventId: string }).eventId, id);
    const retry = await request(server.url, `${itemPath(`stripe:${id}`)}/$retry`, { method: 'PUT' });
    assert.equal(retry.status, 409, retry.text);
    assert.equal((await sendStripe(server.url, `${id}é`)).status, 400, 'the 255 limit is on the event id');
  });

  it('should refuse, on the default source, an id that starts with a named source\'s name and a colon, and never call a clash a duplicate', async () => {
    const res = await sendResapi(server.url, 'stripe:evt_x');
    assert.equal(res.status, 400, res.text);
    assert.match(problemOf(res).detail, /source stripe/);
    assert.equal((await request(server.url, itemPath('stripe:evt_x'))).status, 404);

    // A store written before the stripe source existed may hold a default-source event at that address.
    const doc = { id: 'stripe:evt_old', event: 'order.created', status: 'processed', attempts: 1, receivedAt: new Date(NOW_S * 1000).toISOString() };
    assert.equal((await server.store.commit({ mutations: [{ kind: 'put', collection: '$inbox', id: doc.id, doc }] })).ok, true);
    const clash = await sendStripe(server.url, 'evt_old');
    assert.equal(clash.status, 409, clash.text);
    assert.match(problemOf(clash).detail, /holds an event of the source webhooks/);
    const old = (await request(server.url, itemPath('stripe:evt_old'))).json();
    assert.deepEqual(pick(old, ['source', 'eventId']), { source: 'webhooks', eventId: 'stripe:evt_old' });
  });

  it('should pick the scheme by the path: another scheme\'s signed delivery is refused there', async () => {
    const body = stripeEvent('evt_cross');
    const resapiSigned = signedHeaders('resapi', STRIPE_SECRET, { id: 'evt_cross', kind: 'invoice.paid', body, timestampS: NOW_S });
    const res = await post(server.url, '/webhooks/stripe', body, resapiSigned);
    assert.equal(res.status, 401);
    assert.match(problemOf(res).detail, /^Stripe-Signature is missing/);
    const stripeSigned = signedHeaders('stripe', RESAPI_SECRET, { id: 'evt_cross', kind: 'x', body, timestampS: NOW_S });
    assert.equal((await post(server.url, '/webhooks', body, stripeSigned)).status, 401);
    assert.equal((await request(server.url, itemPath('stripe:evt_cross'))).status, 404);
  });

  it('should refuse with a problem that says why, record nothing, and log one line per reason', async () => {
    const before = logged.length;
    const stale = await sendStripe(server.url, 'evt_stale', {}, NOW_S - 301);
    assert.equal(stale.status, 400);
    assert.match(problemOf(stale).detail, /Stripe-Signature timestamp \(t\) is more than 300 s away/);
    for (let n = 0; n < 3; n++) {
      const body = stripeEvent('evt_forged');
      const forged = await post(server.url, '/webhooks/stripe', body, signedHeaders('stripe', 'whsec_not_the_secret_at_all', { id: 'evt_forged', kind: 'x', body, timestampS: NOW_S }));
      assert.equal(forged.status, 401);
      assert.match(problemOf(forged).detail, /No v1 signature in Stripe-Signature matches/);
      assert.equal(forged.headers['www-authenticate'], 'HMAC-SHA256 realm="webhooks"');
    }
    const body = JSON.stringify({ type: 'contact.created' });
    const unsigned = await post(server.url, '/webhooks/svix', body, { 'webhook-timestamp': String(NOW_S), 'webhook-signature': 'v1,x' });
    assert.equal(unsigned.status, 401);
    assert.match(problemOf(unsigned).detail, /^webhook-id is missing/);
    const large = await post(server.url, '/webhooks/github', 'x'.repeat(5000), { 'X-Hub-Signature-256': 'sha256=00' });
    assert.equal(large.status, 413);
    assert.match(problemOf(large).detail, /exceeds the limit of 4096 bytes/);
    const text = await request(server.url, '/webhooks/github', { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: 'hi' });
    assert.equal(text.status, 415);
    assert.match(problemOf(text).detail, /choose it as the Content type in the webhook's settings on GitHub/);
    for (const id of ['stripe:evt_stale', 'stripe:evt_forged', 'svix:evt']) assert.equal((await request(server.url, itemPath(id))).status, 404, id);

    const lines = logged.slice(before).filter(({ message }) => message.startsWith('webhook delivery refused'));
    assert.deepEqual(lines.map(({ fields }) => `${String(fields['source'])}: ${String(fields['reason'])}`), [
      'stripe: timestamp outside the window',
      'stripe: no signature matched',
      'svix: webhook-id missing',
    ]);
    assert.ok(lines.every(({ fields }) => typeof fields['requestId'] === 'string'));
    assert.doesNotMatch(JSON.stringify(logged), /whsec_stripe_source_secret|whsec_not_the_secret/);
  });

  it('should answer 503 naming the variable on a source without a secret, said once at start', async () => {
    for (let n = 0; n < 2; n++) {
      const body = stripeEvent('evt_idle');
      const res = await post(server.url, '/webhooks/idle', body, signedHeaders('stripe', STRIPE_SECRET, { id: 'evt_idle', kind: 'x', body, timestampS: NOW_S }));
      assert.equal(res.status, 503);
      assert.match(String(res.headers['retry-after']), /^\d+$/);
      const problem = problemOf(res);
      assert.equal(problem.type, 'tag:resapi,2026:problem/webhook-secret-missing');
      assert.match(problem.detail, /No secret is configured for the webhook source idle at \/webhooks\/idle.*IDLE_WEBHOOK_SECRETS/);
    }
    const lines = logged.filter(({ message }) => message.includes('no secret is configured'));
    assert.deepEqual(lines.map(({ message }) => message), ['the webhook source idle at /webhooks/idle answers 503: no secret is configured (IDLE_WEBHOOK_SECRETS)']);
  });

  it('should describe each source\'s path in /$openapi with its scheme\'s header fields', async () => {
    const document = (await request(server.url, '/$openapi')).json() as { paths: Record<string, { post?: { parameters?: { $ref: string }[] } }> };
    const reads = (path: string) => (document.paths[path]?.post?.parameters ?? []).map((parameter) => parameter.$ref.split('/').pop());
    assert.deepEqual(reads('/webhooks'), ['X-Signature', 'X-Timestamp']);
    assert.deepEqual(reads('/webhooks/stripe'), ['Stripe-Signature']);
    assert.deepEqual(reads('/webhooks/github'), ['X-Hub-Signature-256', 'X-GitHub-Delivery', 'X-GitHub-Event']);
    assert.deepEqual(reads('/webhooks/svix'), ['webhook-id', 'webhook-timestamp', 'webhook-signature']);
    assert.ok(document.paths['/webhooks/idle'] !== undefined);
    assert.equal((await request(server.url, '/webhooks/nothing', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' })).status, 404);
  });
});

describe('webhookSecrets given to start()', () => {
  it('should refuse a record that names no source, and keep an array for the first source', async () => {
    await assert.rejects(start({ webhooks: { sources: SOURCES }, webhookSecrets: { strip: ['x'] } }), /webhookSecrets: no receiving source is named "strip"/);
    await assert.rejects(start({ webhooks: { sources: SOURCES }, webhookSecrets: { stripe: ['a', 'b', 'c'] } }), /webhookSecrets\.stripe: at most two secrets/);
    await withServer({ memory: true, clock: clockAt(() => NOW_S * 1000), webhooks: { sources: SOURCES }, webhookSecrets: [RESAPI_SECRET] }, async (server) => {
      assert.equal((await sendResapi(server.url, 'evt-array')).text, ACCEPTED);
      assert.equal((await sendStripe(server.url, 'evt-array')).status, 503);
    });
  });
});

function start(options: Record<string, unknown>): Promise<unknown> {
  return withServer({ memory: true, ...options }, async () => {});
}

function pick(value: unknown, keys: readonly string[]): Record<string, unknown> {
  const object = value as Record<string, unknown>;
  return Object.fromEntries(keys.map((key) => [key, object[key]]));
}

describe('a named source\'s accepted event under kill -9', () => {
  const servers: RunningServer[] = [];
  after(() => {
    for (const running of servers) killIfRunning(running.child);
  });
  const tempFolder = tempDirsForSuite('webhook-sources');

  it('should process it after a restart, with its source, id, kind and header fields', { timeout: 60_000 }, async () => {
    const folder = tempFolder();
    const config = join(folder, 'config.json');
    writeFileSync(config, JSON.stringify({ webhooks: { sources: SOURCES.slice(0, 2) } }));
    const log = join(folder, 'handled.jsonl');
    const handlers = join(folder, 'handlers.mjs');
    writeFileSync(handlers, `import { appendFileSync } from 'node:fs';
export default {
  'invoice.paid': async (event, ctx) => {
    appendFileSync(${JSON.stringify(log)}, JSON.stringify({ id: ctx.id, kind: ctx.kind, source: ctx.source, agent: ctx.headers['user-agent'], type: event.type }) + '\\n');
  },
};
`);
    const env = { RESAPI_WEBHOOK_SECRETS: RESAPI_SECRET, STRIPE_WEBHOOK_SECRETS: `${STRIPE_SECRET},whsec_previous_secret_0123456789` };
    const args = ['--data-dir', join(folder, 'data'), '--config', config];
    // No handler for its kind yet: the event stays accepted, durably, when the process is killed.
    const first = await startBinary(args, env);
    servers.push(first);
    const body = stripeEvent('evt_crash');
    const headers = { ...signedHeaders('stripe', STRIPE_SECRET, { id: 'evt_crash', kind: 'invoice.paid', body, timestampS: Math.floor(Date.now() / 1000) }), 'User-Agent': 'Stripe/1.0' };
    const res = await post(first.url, '/webhooks/stripe', body, headers);
    assert.equal(res.text, ACCEPTED);
    const exited = once(first.child, 'exit');
    first.child.kill('SIGKILL');
    await exited;
    assert.equal(existsSync(log), false);

    const second = await startBinary([...args, '--handlers', handlers], env);
    servers.push(second);
    const item = await eventually('the event processed after the restart', async () => {
      const read = await request(second.url, itemPath('stripe:evt_crash'));
      const doc = read.json() as { status: string };
      return doc.status === 'processed' ? doc : undefined;
    });
    assert.deepEqual(pick(item, ['id', 'source', 'eventId', 'event']), { id: 'stripe:evt_crash', source: 'stripe', eventId: 'evt_crash', event: 'invoice.paid' });
    assert.deepEqual(readFileSync(log, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as unknown), [
      { id: 'evt_crash', kind: 'invoice.paid', source: 'stripe', agent: 'Stripe/1.0', type: 'invoice.paid' },
    ]);
    // The dedup id survived the kill: the provider's retry is a duplicate.
    assert.equal((await post(second.url, '/webhooks/stripe', body, headers)).text, DUPLICATE);
    assert.equal(await second.stop(), 0);
  });

  it('should read each source\'s secrets from its own variable and say which source has none', async () => {
    const folder = tempFolder();
    const config = join(folder, 'config.json');
    writeFileSync(config, JSON.stringify({ webhooks: { sources: SOURCES.slice(0, 2) } }));
    const running = await startBinary(['--memory', '--config', config], { RESAPI_WEBHOOK_SECRETS: '', STRIPE_WEBHOOK_SECRETS: STRIPE_SECRET });
    servers.push(running);
    const closed = once(running.child, 'close');
    assert.equal((await sendStripe(running.url, 'evt_env', {}, Math.floor(Date.now() / 1000))).text, ACCEPTED);
    assert.equal((await sendResapi(running.url, 'evt_env')).status, 503);
    assert.equal(await running.stop(), 0);
    await closed;
    const lines = running.stderr().split('\n').filter((line) => /no secret is configured/.test(line));
    assert.equal(lines.length, 1, running.stderr());
    assert.match(lines[0] as string, /the webhook receiver at \/webhooks answers 503: no secret is configured \(RESAPI_WEBHOOK_SECRETS\)/);
    assert.doesNotMatch(running.stderr(), /whsec_stripe_source_secret/);
  });
});
