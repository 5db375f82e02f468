// Checks of writes that are safe to repeat: a PUT repeated leaves the same state and a conditional PUT
// retried after it succeeded changes nothing (CONVENTIONS.md#idempotent-methods), a POST without a key
// creates each time (CONVENTIONS.md#post-creates) and a keyed POST is replayed rather than repeated
// (CONVENTIONS.md#idempotency-keys), a bulk file of replacement values applies once
// (CONVENTIONS.md#bulk-updates), and a deleted item comes back with the undo request
// (CONVENTIONS.md#undo-delete). post-create, bulk-once and undo-delete establish what the others
// build on: a server without the route is failed once there, and the others are blocked by it.
import { isDeepStrictEqual } from 'node:util';
import type { JsonObject, JsonValue } from '../../json.js';
import { check, JSON_BODY, JSON_CREATE_ONLY } from '../define.js';
import {
  expectHeader,
  expectObject,
  expectProblem,
  expectStatus,
  expectThat,
  routeOrBlocked,
  seen,
} from '../expect.js';
import type { ProbeRequest, ProbeResponse } from '../probe.js';
import type { Check, CheckContext } from '../types.js';

const CSV_BODY = { 'Content-Type': 'text/csv' } as const;
/** The header that carries the key (CONVENTIONS.md#idempotency-keys). */
const IDEMPOTENCY_KEY = 'Idempotency-Key';

export const IDEMPOTENCE_CHECKS: readonly Check[] = [
  check('idempotence', 'put-repeat',
    { anchor: 'idempotent-methods', rfc: 'RFC 9110 §9.2.2', needs: ['item', 'read', 'replace'] },
    'PUT is idempotent: the same representation PUT twice leaves the same stored state ' +
      '(same body, same ETag)',
    async (c) => {
      const item = await c.newItem({ name: 'before' });
      const doc: JsonObject = { ...item.doc, name: 'replaced twice' };
      const body = JSON.stringify(doc);
      const firstHeaders = { ...JSON_BODY, 'If-Match': item.etag };
      const first = await c.send({ method: 'PUT', path: item.path, headers: firstHeaders, body });
      expectStatus(first, 200);
      const afterFirst = await c.send({ method: 'GET', path: item.path });
      expectStatus(afterFirst, 200);
      const secondHeaders = { ...JSON_BODY, 'If-Match': expectHeader(afterFirst, 'etag') };
      const second = await c.send({ method: 'PUT', path: item.path, headers: secondHeaders, body });
      expectStatus(second, 200);
      const afterSecond = await c.send({ method: 'GET', path: item.path });
      expectStatus(afterSecond, 200);
      expectThat(
        isDeepStrictEqual(afterFirst.json(), afterSecond.json()),
        `the item read ${seen(afterFirst)} after the first PUT and ${seen(afterSecond)} after the same PUT again`,
      );
      const [firstTag, secondTag] = [afterFirst.header('etag'), afterSecond.header('etag')];
      expectThat(
        firstTag === secondTag,
        `the ETag went from ${String(firstTag)} to ${String(secondTag)} though the same representation was PUT`,
      );
    }),

  // The retry carries an ETag made stale by the first PUT: a server that takes a stale If-Match
  // (conditional/if-match-stale failed) applies it again, which is that failure, not a second one.
  check('idempotence', 'conditional-put-retried',
    { anchor: 'idempotent-methods', needs: ['item', 'replace', 'stale'] },
    'A conditional PUT retried after it succeeded is refused with 412 and the value is applied only once',
    async (c) => {
      const item = await c.newItem({ name: 'before' });
      const request: ProbeRequest = {
        method: 'PUT',
        path: item.path,
        headers: { ...JSON_BODY, 'If-Match': item.etag },
        body: JSON.stringify({ ...item.doc, name: 'after' }),
      };
      expectStatus(await c.send(request), 200);
      // The retry a client makes when the first answer was lost: same request, same (now stale) ETag.
      const retry = await c.send(request);
      expectStatus(retry, 412);
      const after = await c.send({ method: 'GET', path: item.path });
      expectStatus(after, 200);
      expectThat(expectObject(after)['name'] === 'after', `after the retry the item reads ${seen(after)}`);
    }),

  // The prerequisite `post`: what a POST made, and where, is what the keyed checks compare.
  check('idempotence', 'post-create', { anchor: 'post-creates', rfc: 'RFC 9110 §15.3.2' },
    'POST of a JSON object to a collection creates an item: 201 with a Location in the collection',
    async (c) => {
      const response = await c.send({
        method: 'POST',
        path: `/${c.collection}`,
        headers: JSON_BODY,
        body: JSON.stringify({ name: 'posted' }),
      });
      const created = createdAt(c, response);
      try {
        expectStatus(response, 201);
        const location = expectHeader(response, 'location');
        expectThat(created.length === 1, `Location: ${location} is not in the collection posted to`);
      } finally {
        await removeCreated(c, created);
      }
    }),

  check('idempotence', 'post-key-replayed', { anchor: 'idempotency-keys', needs: ['post'] },
    'A POST repeated with the same Idempotency-Key and body is replayed: ' +
      'same status, Location and body, with Idempotent-Replayed: true',
    async (c) => {
      const key = `rcheck-${c.tag}-replay`;
      const request: ProbeRequest = {
        method: 'POST',
        path: `/${c.collection}`,
        headers: { ...JSON_BODY, [IDEMPOTENCY_KEY]: key },
        body: JSON.stringify({ name: `posted with ${key}` }),
      };
      const first = await c.send(request);
      const created = createdAt(c, first);
      try {
        expectStatus(first, 201);
        const location = expectHeader(first, 'location');
        const again = await c.send(request);
        created.push(...createdAt(c, again));
        expectStatus(again, first.status);
        const relocated = again.header('location');
        expectThat(
          relocated === location,
          `the repeat answered Location ${String(relocated)}, the first ${location}: a second resource`,
        );
        expectThat(again.text === first.text, `the repeat answered ${seen(again)}, the first ${seen(first)}`);
        const replayed = again.header('idempotent-replayed');
        expectThat(
          replayed?.toLowerCase() === 'true',
          `the repeat carries Idempotent-Replayed: ${replayed ?? '(none)'}`,
        );
      } finally {
        await removeCreated(c, created);
      }
    }),

  // A server that ignores the key (post-key-replayed failed) creates again whatever the body: that
  // failure, not a second one.
  check('idempotence', 'post-key-reused', { anchor: 'idempotency-keys', needs: ['post', 'keys'] },
    'The same Idempotency-Key with a different body is refused with 422 and creates nothing',
    async (c) => {
      const key = `rcheck-${c.tag}-reused`;
      const headers = { ...JSON_BODY, [IDEMPOTENCY_KEY]: key };
      const first = await c.send({
        method: 'POST',
        path: `/${c.collection}`,
        headers,
        body: JSON.stringify({ name: 'first body' }),
      });
      const created = createdAt(c, first);
      try {
        expectStatus(first, 201);
        const other = await c.send({
          method: 'POST',
          path: `/${c.collection}`,
          headers,
          body: JSON.stringify({ name: 'another body' }),
        });
        created.push(...createdAt(c, other));
        await expectProblem(c, other, 422);
      } finally {
        await removeCreated(c, created);
      }
    }),

  check('idempotence', 'post-without-key', { anchor: 'post-creates', needs: ['post'] },
    'POST without an idempotency key is not idempotent: the same body POSTed twice creates two resources',
    async (c) => {
      const request: ProbeRequest = {
        method: 'POST',
        path: `/${c.collection}`,
        headers: JSON_BODY,
        body: JSON.stringify({ name: 'posted twice' }),
      };
      const first = await c.send(request);
      const created = createdAt(c, first);
      try {
        expectStatus(first, 201);
        const second = await c.send(request);
        created.push(...createdAt(c, second));
        expectStatus(second, 201);
        const replayed = second.header('idempotent-replayed') !== undefined;
        expectThat(!replayed, `a POST without a key was answered as a replay: ${seen(second)}`);
        const location = expectHeader(first, 'location');
        const distinct = expectHeader(second, 'location') !== location;
        expectThat(distinct, `both POSTs answered Location ${location}: one resource, not two`);
      } finally {
        await removeCreated(c, created);
      }
    }),

  check('idempotence', 'post-key-twice', { anchor: 'idempotency-keys', needs: ['keys'] },
    'An Idempotency-Key field sent twice is refused with 400',
    async (c) => {
      const response = await c.send({
        method: 'POST',
        path: `/${c.collection}`,
        headers: { ...JSON_BODY, [IDEMPOTENCY_KEY]: [`rcheck-${c.tag}-one`, `rcheck-${c.tag}-two`] },
        body: JSON.stringify({ name: 'two keys' }),
      });
      await removeCreated(c, createdAt(c, response));
      await expectProblem(c, response, 400);
    }),

  check('idempotence', 'bulk-once', { anchor: 'bulk-updates', needs: ['item'] },
    'A bulk file of currentX/newX pairs is applied once: ' +
      'the same file sent again changes nothing (every row skipped)',
    async (c) => {
      const a = await c.newItem({ price: 10 });
      const b = await c.newItem({ price: 10 });
      const csv = `productId,currentPrice,newPrice\r\n${a.id},10,15\r\n${b.id},10,15\r\n`;
      const first = await c.send({ method: 'PUT', path: `/${c.collection}/$bulk`, headers: CSV_BODY, body: csv });
      expectStatus(first, 200);
      expectCounts(first, 2, 0);
      const second = await c.send({ method: 'PUT', path: `/${c.collection}/$bulk`, headers: CSV_BODY, body: csv });
      expectStatus(second, 200);
      expectCounts(second, 0, 2);
      await expectField(c, a.path, 'price', 15);
    }),

  check('idempotence', 'bulk-conditional', { anchor: 'bulk-updates', needs: ['item'] },
    'A bulk row is applied only when the stored value still equals currentX; ' +
      'otherwise the record is left unchanged',
    async (c) => {
      const item = await c.newItem({ price: 10 });
      const csv = `productId,currentPrice,newPrice\r\n${item.id},12,20\r\n`;
      const sent = await c.send({ method: 'PUT', path: `/${c.collection}/$bulk`, headers: CSV_BODY, body: csv });
      const response = await routeOrBlocked(c, sent, 'bulk');
      expectStatus(response, 200);
      expectCounts(response, 0, 0);
      const conflicts = expectObject(response)['conflicts'];
      expectThat(
        Array.isArray(conflicts) && conflicts.length === 1,
        `the row whose currentPrice does not match is not reported as a conflict: ${seen(response)}`,
      );
      await expectField(c, item.path, 'price', 10);
    }),

  check('idempotence', 'bulk-no-increments', { anchor: 'bulk-updates', needs: ['item'] },
    'A bulk file carrying increments or percentages is refused with 400 and changes nothing',
    async (c) => {
      const item = await c.newItem({ price: 10 });
      for (const column of ['increment', 'percent']) {
        const csv = `productId,${column}\r\n${item.id},5\r\n`;
        const sent = await c.send({ method: 'PUT', path: `/${c.collection}/$bulk`, headers: CSV_BODY, body: csv });
        await expectProblem(c, await routeOrBlocked(c, sent, 'bulk'), 400);
      }
      await expectField(c, item.path, 'price', 10);
    }),

  check('idempotence', 'undo-delete', { anchor: 'undo-delete', needs: ['item', 'read', 'delete'] },
    'The undo request restores a deleted item: 200 with its representation and an ETag, ' +
      'and GET works again',
    async (c) => {
      const item = await c.newItem({ name: 'to restore' });
      await expectDeleted(c, item.path);
      const undo = await c.send({ method: 'PUT', path: `${item.path}/$undoDelete` });
      expectStatus(undo, 200);
      const etag = expectHeader(undo, 'etag');
      expectHolds(undo, item.doc);
      const after = await c.send({ method: 'GET', path: item.path });
      expectStatus(after, 200);
      expectHolds(after, item.doc);
      const restored = after.header('etag');
      expectThat(restored === etag, `the undo answered ETag ${etag}, the next GET ${String(restored)}`);
    }),

  check('idempotence', 'undo-repeated', { anchor: 'undo-delete', needs: ['item', 'undo'] },
    'Repeating an undo that already restored the item answers 200 again',
    async (c) => {
      const item = await c.newItem({ name: 'restored twice' });
      await expectDeleted(c, item.path);
      expectStatus(await c.send({ method: 'PUT', path: `${item.path}/$undoDelete` }), 200);
      const again = await c.send({ method: 'PUT', path: `${item.path}/$undoDelete` });
      expectStatus(again, 200);
      expectHolds(again, item.doc);
    }),

  check('idempotence', 'undo-no-tombstone', { anchor: 'undo-delete', needs: ['undo'] },
    'Undo of an item that was never deleted (no tombstone) answers 404',
    async (c) => {
      const response = await c.send({ method: 'PUT', path: `/${c.collection}/${c.newId()}/$undoDelete` });
      await expectProblem(c, response, 404);
    }),

  check('idempotence', 'undo-after-recreate', { anchor: 'undo-delete', needs: ['item', 'undo'] },
    'Undo of an item that was recreated since it was deleted answers 409 and keeps the new item',
    async (c) => {
      const item = await c.newItem({ name: 'old' });
      await expectDeleted(c, item.path);
      const recreated = await c.send({
        method: 'PUT',
        path: item.path,
        headers: JSON_CREATE_ONLY,
        body: JSON.stringify({ ...item.doc, name: 'new' }),
      });
      expectStatus(recreated, 201);
      const undo = await c.send({ method: 'PUT', path: `${item.path}/$undoDelete` });
      await expectProblem(c, undo, 409);
      await expectField(c, item.path, 'name', 'new');
    }),
];

/** Absolute URLs of what a POST created in the run's collection (none when it created nothing). */
function createdAt(c: CheckContext, response: ProbeResponse): string[] {
  const location = response.header('location');
  if (response.status !== 201 || location === undefined) return [];
  const url = new URL(location, response.url);
  // Only what lies in the run's own collection is the run's to delete.
  return url.pathname.includes(`/${c.collection}/`) ? [url.href] : [];
}

/** Deletes what a POST of the check created (server-chosen ids the run's clean-up does not know). */
async function removeCreated(c: CheckContext, urls: readonly string[]): Promise<void> {
  for (const url of new Set(urls)) await c.send({ method: 'DELETE', path: url });
}

function expectCounts(response: ProbeResponse, applied: number, skipped: number): void {
  const report = expectObject(response);
  expectThat(
    report['applied'] === applied && report['skipped'] === skipped,
    `expected applied ${applied}, skipped ${skipped}; the report is ${seen(response)}`,
  );
}

async function expectField(c: CheckContext, path: string, field: string, value: JsonValue): Promise<void> {
  const response = await c.send({ method: 'GET', path });
  expectStatus(response, 200);
  const actual = expectObject(response)[field];
  expectThat(
    isDeepStrictEqual(actual, value),
    `${path} has ${field} ${JSON.stringify(actual)}, expected ${JSON.stringify(value)}`,
  );
}

async function expectDeleted(c: CheckContext, path: string): Promise<void> {
  const response = await c.send({ method: 'DELETE', path });
  expectThat(response.status >= 200 && response.status < 300, `DELETE ${path} answered ${seen(response)}`);
}

/** The body holds every member of `doc` with the same value (a restore gives back what was stored). */
function expectHolds(response: ProbeResponse, doc: JsonObject): void {
  const body = expectObject(response);
  for (const [name, value] of Object.entries(doc)) {
    expectThat(
      isDeepStrictEqual(body[name], value),
      `"${name}" is ${JSON.stringify(body[name])}, was ${JSON.stringify(value)}: ${seen(response)}`,
    );
  }
}
