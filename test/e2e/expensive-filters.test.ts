// End to end: filters past a small cost share `limits.expensiveFilters` slots
// (CONVENTIONS.md#filter-errors-and-budget). The test holds every slot itself, through the slots it
// hands the server, so "the others are still running" is a state it controls rather than a race with
// the scans: while they are held an expensive filter is answered 503 with Retry-After, and a cheap
// filter and an item are answered as always; once they are given back the same filter is answered.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FilterSlots } from '../../lib/query/expensive.js';
import { create, problemOf, request } from '../support/http.js';
import { serverForSuite } from '../support/server.js';

/**
 * Ten items whose 300 tags make a double lambda cost about 450,000 steps each: 4.5 million in all.
 * Each use asks for a value of its own, so no answer comes from the page cache without a scan.
 */
const expensive = (value: number): string => `/wide?$filter=tags/any(a: tags/any(b: b eq ${value}))`;
const CHEAP = "/wide?$filter=id eq 'w3'";

describe('expensive filters', () => {
  const slots = new FilterSlots(2);
  const server = serverForSuite({ memory: true, filterSlots: slots }, async (started) => {
    const tags = Array.from({ length: 300 }, (_, n) => n);
    for (let n = 0; n < 10; n++) assert.equal((await create(started.url, `/wide/w${n}`, { tags })).status, 201);
  });

  it('should answer an expensive filter when a slot is free and give the slot back', async () => {
    const res = await request(server.url, expensive(-1));
    assert.equal(res.status, 200);
    assert.deepEqual((res.json() as { value: unknown[] }).value, []);
    assert.equal(slots.taken, 0);
  });

  it('should answer 503 with Retry-After to an expensive filter while every slot is held, and answer cheap requests', async () => {
    const held = [slots.acquire(), slots.acquire()];
    try {
      assert.ok(held.every((release) => release !== undefined));
      const refused = await request(server.url, expensive(-2));
      assert.equal(refused.status, 503);
      assert.match(String(refused.headers['retry-after']), /^[1-9][0-9]*$/);
      assert.equal(refused.headers['content-type'], 'application/problem+json');
      assert.match(problemOf(refused).type, /\/filters-busy$/);
      assert.match(problemOf(refused).detail, /expensiveFilters/);
      const cheap = await request(server.url, CHEAP);
      assert.equal(cheap.status, 200);
      assert.deepEqual((cheap.json() as { value: { id: string }[] }).value.map((item) => item.id), ['w3']);
      assert.equal((await request(server.url, '/wide/w0')).status, 200);
      assert.equal((await request(server.url, '/$health')).status, 200);
    } finally {
      for (const release of held) release?.();
    }
    assert.equal((await request(server.url, expensive(-2))).status, 200);
  });
});
