// Ids are text (CONVENTIONS.md#names, #webhook-event-body): an event id is well-formed Unicode of 1-255
// code points, whatever its UTF-16 length, addressable percent-encoded in /$inbox/{eventId}; a lone
// surrogate is refused with 400 at the receiver and at the route, so it never reaches a listing.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Agent } from 'node:http';
import { INBOX_SPACE } from '../../lib/webhooks/inbox.js';
import { problemOf, request } from '../support/http.js';
import { serverForSuite } from '../support/server.js';
import { deliver, signedDelivery } from '../support/webhooks.js';

const SECRET = 'event-ids-test-secret';
const HTML_ACCEPT = 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.8';
/** U+1F600: one code point, two UTF-16 units, four UTF-8 bytes. */
const ASTRAL = '\u{1F600}';
/** A UTF-16 unit that is half of a surrogate pair but not in one: with the u flag, pairs are one code point. */
const LONE_SURROGATE = /\p{Cs}/u;

describe('event ids as text', () => {
  const server = serverForSuite({ memory: true, webhookSecrets: [SECRET] });
  const agent = new Agent({ keepAlive: true });
  after(() => agent.destroy());

  const send = (id: string) => deliver(agent, server.url, signedDelivery(id, 'ids.test', { n: 1 }, SECRET));

  /** The JSON listing and the HTML page answer 200; `refused`, when given, is in neither. */
  async function assertListingsServe(refused?: string): Promise<void> {
    const listed = await request(server.url, '/$inbox?$select=id', { headers: { Prefer: 'maxpagesize=1000' } });
    assert.equal(listed.status, 200, listed.text);
    const ids = (listed.json() as { value: { id: string }[] }).value.map((item) => item.id);
    const page = await request(server.url, '/$inbox', { headers: { Accept: HTML_ACCEPT } });
    assert.equal(page.status, 200, page.text.slice(0, 500));
    if (refused !== undefined) assert.equal(ids.includes(refused), false);
  }

  // Regression: a validly signed "\ud800-…" was accepted, and then /$inbox?$select=id and the HTML page
  // answered 500 (URIError while percent-encoding the item links), and the event could not be addressed.
  for (const [name, id] of [
    ['a lone high surrogate first', '\ud800-evt-1'],
    ['a lone low surrogate last', 'evt-2-\udc00'],
    ['two surrogates in the wrong order', 'evt-3-\udc00\ud800'],
  ] as const) {
    it(`should refuse an event id with ${name} with 400, store nothing, and keep the listings serving`, async () => {
      const answer = await send(id);
      assert.equal(answer.status, 400, answer.text);
      const refused = JSON.parse(answer.text) as { type: string; errors: { pointer: string; detail: string }[] };
      assert.match(refused.type, /invalid-body$/);
      assert.equal(refused.errors[0]?.pointer, '/id');
      assert.match(refused.errors[0]?.detail ?? '', /Unicode/);
      assert.equal(server.store.get(INBOX_SPACE, id), undefined);
      assert.equal(server.store.scan(INBOX_SPACE).some((record) => LONE_SURROGATE.test(record.id)), false);
      await assertListingsServe(id);
    });
  }

  it('should count an event id in code points: 255 astral characters (510 UTF-16 units) are accepted and addressable', async () => {
    const id = ASTRAL.repeat(255);
    const answer = await send(id);
    assert.equal(answer.status, 200, answer.text);
    const item = await request(server.url, `/$inbox/${encodeURIComponent(id)}`);
    assert.equal(item.status, 200, item.text);
    assert.equal((item.json() as { id: string }).id, id);
    await assertListingsServe();
  });

  it('should refuse 256 code points at the receiver and in the path, naming the limit', async () => {
    const id = `é${ASTRAL.repeat(255)}`;
    const answer = await send(id);
    assert.equal(answer.status, 400, answer.text);
    assert.match(answer.text, /1-255 code points/);
    const item = await request(server.url, `/$inbox/${encodeURIComponent(id)}`);
    assert.equal(item.status, 400, item.text);
    assert.match(problemOf(item).detail, /1-255 code points/);
  });

  // A data dir written before ids had to be well-formed may hold one: the listings must still serve.
  it('should keep listing an event whose stored id holds a lone surrogate', async () => {
    const doc = { id: '\ud800-old', event: 'ids.test', status: 'processed', attempts: 1, receivedAt: new Date().toISOString() };
    const written = await server.store.commit({ mutations: [{ kind: 'put', collection: INBOX_SPACE, id: doc.id, doc }] });
    assert.equal(written.ok, true);
    const listed = await request(server.url, '/$inbox?$select=id', { headers: { Prefer: 'maxpagesize=1000' } });
    assert.equal(listed.status, 200, listed.text);
    const page = await request(server.url, '/$inbox', { headers: { Accept: HTML_ACCEPT } });
    assert.equal(page.status, 200, page.text.slice(0, 500));
    assert.equal(page.text.includes('\ufffd-old'), true, 'the id is shown with U+FFFD in place of the lone surrogate');
  });

  it('should refuse a path segment that would decode to a lone surrogate with 400', async () => {
    // %ED%A0%80 is the CESU-8 spelling of U+D800: not UTF-8, so never an id.
    const item = await request(server.url, '/$inbox/%ED%A0%80-evt');
    assert.equal(item.status, 400, item.text);
    assert.equal(item.headers['content-type'], 'application/problem+json');
  });
});
