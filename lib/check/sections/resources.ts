// Checks of resources and their routes: items at /{collection}/{id} created by PUT
// (CONVENTIONS.md#conditional-create) and read back (CONVENTIONS.md#items), representations described
// by Content-Type (CONVENTIONS.md#representations), a 404 for an item that does not exist
// (CONVENTIONS.md#routes), collections as an envelope object (CONVENTIONS.md#collection-envelope), and
// DELETE (CONVENTIONS.md#delete-and-tombstones). put-create is the prerequisite `item` of most checks;
// the envelope is judged on a GET of the run's collection alone, so it fails only for its own rule.
import { check, JSON_CREATE_ONLY } from '../define.js';
import { expectEnvelope, expectHeader, expectObject, expectStatus, expectThat, seen } from '../expect.js';
import type { Check } from '../types.js';

export const RESOURCE_CHECKS: readonly Check[] = [
  check('resources', 'put-create', { anchor: 'conditional-create' },
    'PUT with If-None-Match: * creates the item: 201 with an ETag',
    async (c) => {
      const id = c.newId();
      const response = await c.send({
        method: 'PUT',
        path: `/${c.collection}/${id}`,
        headers: JSON_CREATE_ONLY,
        body: JSON.stringify({ id, name: 'created' }),
      });
      expectStatus(response, 201);
      expectHeader(response, 'etag');
    }),

  check('resources', 'get-item', { anchor: 'items', needs: ['item'] },
    'GET of an item answers 200 with the representation and an ETag',
    async (c) => {
      const item = await c.newItem({ name: 'read me' });
      const response = await c.send({ method: 'GET', path: item.path });
      expectStatus(response, 200);
      expectHeader(response, 'etag');
      const body = expectObject(response);
      expectThat(body['name'] === 'read me', `the item read back is ${seen(response)}`);
    }),

  check('resources', 'content-type', { anchor: 'representations', rfc: 'RFC 9110 §8.3', needs: ['item'] },
    'The Content-Type of a response describes its representation (application/json for an item)',
    async (c) => {
      const item = await c.newItem();
      const response = await c.send({ method: 'GET', path: item.path, headers: { Accept: 'application/json' } });
      expectStatus(response, 200);
      const type = expectHeader(response, 'content-type');
      expectThat(/^application\/json\s*(;|$)/i.test(type), `Content-Type: ${type}`);
    }),

  check('resources', 'missing-item', { anchor: 'routes' },
    'GET of an item that does not exist answers 404',
    async (c) => {
      const response = await c.send({ method: 'GET', path: `/${c.collection}/${c.newId()}` });
      expectStatus(response, 404);
    }),

  // A collection that holds nothing is still 200 with "value": [], so a GET of the run's collection,
  // whatever it holds, is enough: this check needs no item, and fails only for the envelope.
  check('resources', 'envelope', { anchor: 'collection-envelope' },
    'A collection is an object with a "value" array, never a bare array (an empty one too)',
    async (c) => {
      const response = await c.send({ method: 'GET', path: `/${c.collection}` });
      expectThat(response.status === 200, `GET of a collection with no items answered ${seen(response)}`);
      expectEnvelope(response);
    }),

  check('resources', 'no-null-next-link', { anchor: 'collection-envelope', needs: ['envelope'] },
    '"@nextLink" is present only when a next page exists (absent, not null, on the last page)',
    async (c) => {
      const response = await c.send({ method: 'GET', path: `/${c.collection}` });
      expectStatus(response, 200);
      const { body, value } = expectEnvelope(response);
      expectThat(
        value.length < 50 ? !('@nextLink' in body) : true,
        `a page with ${value.length} items carries "@nextLink": ${JSON.stringify(body['@nextLink'])}`,
      );
    }),

  check('resources', 'delete', { anchor: 'delete-and-tombstones', needs: ['item'] },
    'DELETE removes the item: a GET afterwards is 404',
    async (c) => {
      const item = await c.newItem();
      const deleted = await c.send({ method: 'DELETE', path: item.path });
      expectThat(deleted.status >= 200 && deleted.status < 300, `DELETE answered ${seen(deleted)}`);
      const after = await c.send({ method: 'GET', path: item.path });
      expectStatus(after, 404);
    }),

  check('resources', 'delete-idempotent',
    { anchor: 'delete-and-tombstones', rfc: 'RFC 9110 §9.2.2', needs: ['item', 'delete'] },
    'DELETE is idempotent: deleting an item that is already gone succeeds again',
    async (c) => {
      const item = await c.newItem();
      const first = await c.send({ method: 'DELETE', path: item.path });
      const second = await c.send({ method: 'DELETE', path: item.path });
      expectThat(first.status >= 200 && first.status < 300, `the first DELETE answered ${seen(first)}`);
      expectThat(second.status === first.status, `the second DELETE answered ${second.status} after ${first.status}`);
    }),
];
