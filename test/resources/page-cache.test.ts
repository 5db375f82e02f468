// Tests for lib/resources/page-cache.ts: a built page is kept until a commit touches its collection,
// never when a commit landed while it was built, never for a system space, and within its limits,
// its prepared answers with it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PageCache, type BuiltPage, type PageKey } from '../../lib/resources/page-cache.js';
import { MemoryStore } from '../../lib/store/memory.js';
import { represent } from '../../lib/protocol/representation.js';
import type { PreparedRead } from '../../lib/resources/prepared-reads.js';

/** The key of the page that the query string `query` asks for (the other parts alike). */
function key(query: string): PageKey {
  return { scope: 'c', media: 'application/json', pageSize: 50, query };
}

function page(text: string): BuiltPage {
  return { representation: represent(text), contentType: 'application/json', pageSize: 50 };
}

async function put(store: MemoryStore, collection: string, id: string): Promise<void> {
  const result = await store.commit({ mutations: [{ kind: 'put', collection, id, doc: { id } }] });
  assert.ok(result.ok);
}

describe('PageCache', () => {
  it('should answer a kept page until a commit touches its collection, and only its collection', async () => {
    const store = new MemoryStore();
    const cache = new PageCache(store);
    cache.keep('products', key('k'), cache.generation('products'), page('{"value":[]}'));
    cache.keep('orders', key('k'), cache.generation('orders'), page('{"value":[1]}'));
    assert.equal(cache.get('products', key('k'))?.page.representation.bytes.toString(), '{"value":[]}');
    await put(store, 'orders', 'o1');
    assert.notEqual(cache.get('products', key('k')), undefined, 'another collection changed');
    assert.equal(cache.get('orders', key('k')), undefined);
    await put(store, 'products', 'p1');
    assert.equal(cache.get('products', key('k')), undefined);
    cache.close();
  });

  it('should not keep a page when a commit landed while it was built', async () => {
    const store = new MemoryStore();
    const cache = new PageCache(store);
    const generation = cache.generation('products');
    await put(store, 'products', 'p1');
    cache.keep('products', key('k'), generation, page('{"value":[]}'));
    assert.equal(cache.get('products', key('k')), undefined);
    cache.close();
  });

  it('should never keep pages of a system space, whose records expire without a commit', () => {
    const cache = new PageCache(new MemoryStore());
    cache.keep('$outbox', key('k'), cache.generation('$outbox'), page('{"value":[]}'));
    assert.equal(cache.get('$outbox', key('k')), undefined);
    cache.close();
  });

  it('should drop the least recently used pages past its entries or bytes', () => {
    const cache = new PageCache(new MemoryStore(), { entries: 2, bytes: 20 });
    cache.keep('c', key('a'), 0, page('aaaaa'));
    cache.keep('c', key('b'), 0, page('bbbbb'));
    assert.notEqual(cache.get('c', key('a')), undefined, 'a is now the most recently used');
    cache.keep('c', key('c'), 0, page('ccccc'));
    assert.deepEqual(['a', 'b', 'c'].map((query) => cache.get('c', key(query)) !== undefined), [true, false, true]);
    // Read last: a, then c. Three pages are over the two allowed: a, the least recently read, goes.
    cache.keep('c', key('big'), 0, page('x'.repeat(10)));
    assert.deepEqual(['a', 'c', 'big'].map((query) => cache.get('c', key(query)) !== undefined), [false, true, true]);
    cache.keep('c', key('huge'), 0, page('x'.repeat(21)));
    assert.equal(cache.get('c', key('huge')), undefined, 'a page over the byte limit is never kept');
    cache.close();
  });
});

describe('PageCache: prepared answers', () => {
  const prepared = (headBytes: number): PreparedRead => ({
    validators: { etag: '"x"' },
    ok: { status: 200, headers: {} },
    notModified: { status: 304, headers: {} },
    headBytes,
  });

  it('should keep a prepared answer per variant beside its page, and drop it with the page', async () => {
    const store = new MemoryStore();
    const cache = new PageCache(store);
    cache.keep('products', key('k'), cache.generation('products'), page('{"value":[]}'));
    const answer = prepared(10);
    cache.prepare('products', key('k'), '', answer);
    cache.prepare('products', key('k'), '', prepared(10));
    assert.equal(cache.get('products', key('k'))?.prepared.get(''), answer, 'the first answer of a variant stays');
    cache.prepare('products', key('k'), 'maxpagesize=5', prepared(10));
    assert.equal(cache.get('products', key('k'))?.prepared.size, 2);
    await put(store, 'products', 'p1');
    cache.keep('products', key('k'), cache.generation('products'), page('{"value":[1]}'));
    assert.equal(cache.get('products', key('k'))?.prepared.size, 0, 'a page kept again starts without answers');
    cache.close();
  });

  it('should count prepared heads in its bytes and keep at most four variants a page', () => {
    const cache = new PageCache(new MemoryStore(), { entries: 10, bytes: 40 });
    cache.keep('c', key('a'), 0, page('aaaaa'));
    cache.keep('c', key('b'), 0, page('bbbbb'));
    cache.prepare('c', key('b'), '', prepared(31));
    assert.equal(cache.get('c', key('a')), undefined, 'the heads passed the byte limit: the least recently used page went');
    assert.notEqual(cache.get('c', key('b')), undefined);
    for (const variant of ['1', '2', '3', '4']) cache.prepare('c', key('b'), variant, prepared(0));
    assert.equal(cache.get('c', key('b'))?.prepared.size, 4);
    cache.close();
  });
});

describe('PageCache: keys', () => {
  it('should tell apart the pages of one query string by scope, media type and page size', () => {
    const cache = new PageCache(new MemoryStore());
    const variants: PageKey[] = [
      key('q'),
      { ...key('q'), scope: 'c/$queries/cheap' },
      { ...key('q'), media: 'text/csv' },
      { ...key('q'), pageSize: 5 },
    ];
    variants.forEach((variant, index) => cache.keep('c', variant, 0, page(`page ${index}`)));
    variants.forEach((variant, index) => {
      assert.equal(cache.get('c', { ...variant })?.page.representation.bytes.toString(), `page ${index}`);
    });
    cache.keep('c', key('q'), 0, page('again'));
    assert.equal(cache.get('c', key('q'))?.page.representation.bytes.toString(), 'again', 'kept again, in its place');
    assert.equal(cache.get('c', { ...key('q'), pageSize: 5 })?.page.representation.bytes.toString(), 'page 3');
    cache.close();
  });
});

describe('PageCache: accounting', () => {
  it('should count the pages a commit dropped out of its limits', async () => {
    const store = new MemoryStore();
    const cache = new PageCache(store, { entries: 2, bytes: 100 });
    cache.keep('products', key('a'), 0, page('aaaaa'));
    cache.keep('products', key('b'), 0, page('bbbbb'));
    await put(store, 'products', 'p1');
    cache.keep('orders', key('a'), cache.generation('orders'), page('ccccc'));
    cache.keep('orders', key('b'), cache.generation('orders'), page('ddddd'));
    assert.deepEqual(['a', 'b'].map((query) => cache.get('orders', key(query)) !== undefined), [true, true]);
    cache.close();
  });
});
