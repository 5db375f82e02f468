// Tests for lib/resources/page-cache.ts: a built page is kept until a commit touches its collection,
// never when a commit landed while it was built, never for a system space, and within its limits,
// its prepared answers with it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PageCache, type BuiltPage } from '../../lib/resources/page-cache.js';
import { MemoryStore } from '../../lib/store/memory.js';
import { represent } from '../../lib/protocol/representation.js';
import type { PreparedRead } from '../../lib/resources/prepared-reads.js';

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
    cache.keep('products', 'k', cache.generation('products'), page('{"value":[]}'));
    cache.keep('orders', 'k', cache.generation('orders'), page('{"value":[1]}'));
    assert.equal(cache.get('products', 'k')?.page.representation.bytes.toString(), '{"value":[]}');
    await put(store, 'orders', 'o1');
    assert.notEqual(cache.get('products', 'k'), undefined, 'another collection changed');
    assert.equal(cache.get('orders', 'k'), undefined);
    await put(store, 'products', 'p1');
    assert.equal(cache.get('products', 'k'), undefined);
    cache.close();
  });

  it('should not keep a page when a commit landed while it was built', async () => {
    const store = new MemoryStore();
    const cache = new PageCache(store);
    const generation = cache.generation('products');
    await put(store, 'products', 'p1');
    cache.keep('products', 'k', generation, page('{"value":[]}'));
    assert.equal(cache.get('products', 'k'), undefined);
    cache.close();
  });

  it('should never keep pages of a system space, whose records expire without a commit', () => {
    const cache = new PageCache(new MemoryStore());
    cache.keep('$outbox', 'k', cache.generation('$outbox'), page('{"value":[]}'));
    assert.equal(cache.get('$outbox', 'k'), undefined);
    cache.close();
  });

  it('should drop the least recently used pages past its entries or bytes', () => {
    const cache = new PageCache(new MemoryStore(), { entries: 2, bytes: 20 });
    cache.keep('c', 'a', 0, page('aaaaa'));
    cache.keep('c', 'b', 0, page('bbbbb'));
    assert.notEqual(cache.get('c', 'a'), undefined, 'a is now the most recently used');
    cache.keep('c', 'c', 0, page('ccccc'));
    assert.deepEqual(['a', 'b', 'c'].map((key) => cache.get('c', key) !== undefined), [true, false, true]);
    // Read last: a, then c. Three pages are over the two allowed: a, the least recently read, goes.
    cache.keep('c', 'big', 0, page('x'.repeat(10)));
    assert.deepEqual(['a', 'c', 'big'].map((key) => cache.get('c', key) !== undefined), [false, true, true]);
    cache.keep('c', 'huge', 0, page('x'.repeat(21)));
    assert.equal(cache.get('c', 'huge'), undefined, 'a page over the byte limit is never kept');
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
    cache.keep('products', 'k', cache.generation('products'), page('{"value":[]}'));
    const answer = prepared(10);
    cache.prepare('products', 'k', '', answer);
    cache.prepare('products', 'k', '', prepared(10));
    assert.equal(cache.get('products', 'k')?.prepared.get(''), answer, 'the first answer of a variant stays');
    cache.prepare('products', 'k', 'maxpagesize=5', prepared(10));
    assert.equal(cache.get('products', 'k')?.prepared.size, 2);
    await put(store, 'products', 'p1');
    cache.keep('products', 'k', cache.generation('products'), page('{"value":[1]}'));
    assert.equal(cache.get('products', 'k')?.prepared.size, 0, 'a page kept again starts without answers');
    cache.close();
  });

  it('should count prepared heads in its bytes and keep at most four variants a page', () => {
    const cache = new PageCache(new MemoryStore(), { entries: 10, bytes: 40 });
    cache.keep('c', 'a', 0, page('aaaaa'));
    cache.keep('c', 'b', 0, page('bbbbb'));
    cache.prepare('c', 'b', '', prepared(31));
    assert.equal(cache.get('c', 'a'), undefined, 'the heads passed the byte limit: the least recently used page went');
    assert.notEqual(cache.get('c', 'b'), undefined);
    for (const variant of ['1', '2', '3', '4']) cache.prepare('c', 'b', variant, prepared(0));
    assert.equal(cache.get('c', 'b')?.prepared.size, 4);
    cache.close();
  });
});
