// The `$filter` corpus (test/filter/corpus.ts) over HTTP: every valid case answers 200 with exactly
// its ids, every invalid one a 400 problem (naming the offset where the corpus gives one), through
// the real server: query-string decoding, field validation, paging and all (CONVENTIONS.md#filter-expressions,
// CONVENTIONS.md#filter-grammar, CONVENTIONS.md#query-string-decoding).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FIXTURE, INVALID, VALID } from '../filter/corpus.js';
import { create, problemOf, request } from '../support/http.js';
import { serverForSuite } from '../support/server.js';

const server = serverForSuite({}, async (server) => {
  for (const item of FIXTURE) assert.equal((await create(server.url, `/corpus/${String(item['id'])}`, item)).status, 201);
});

describe('the $filter corpus over HTTP', () => {
  it(`should answer each of the ${VALID.length} valid filters with exactly its ids`, async () => {
    for (const { filter, ids } of VALID) {
      const res = await request(server.url, `/corpus?$filter=${encodeURIComponent(filter)}`);
      assert.equal(res.status, 200, `${filter}: ${res.text}`);
      const got = (res.json() as { value: { id: string }[] }).value.map((item) => item.id).sort();
      assert.deepEqual(got, [...ids].sort(), filter);
    }
  });

  it(`should answer each of the ${INVALID.length} invalid filters with a 400 problem (431 when the URL itself is too long)`, async () => {
    for (const { filter, offset } of INVALID) {
      const target = `/corpus?$filter=${encodeURIComponent(filter)}`;
      const res = await request(server.url, target);
      const label = filter.length > 80 ? `${filter.slice(0, 80)}… (${filter.length} characters)` : filter;
      // A request line over the 16 KiB header limit never reaches $filter: RFC 9110 §15.5.15 / RFC 6585 §5.
      assert.equal(res.status, target.length > 16 * 1024 ? 431 : 400, label);
      assert.equal(res.headers['content-type'], 'application/problem+json', label);
      if (res.status === 400 && offset !== undefined) assert.match(problemOf(res).detail, new RegExp(`offset ${offset}\\b`), label);
    }
  });
});
