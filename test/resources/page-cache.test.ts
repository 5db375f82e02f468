// Tests for lib/resources/page-cache.ts: a built page is kept until a commit touches its collection,
// never when a commit landed while it was built, never for a system space, and within its limits.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PageCache, type BuiltPage } from '../../lib/resources/page-cache.js';
import { MemoryStore } from '../../lib/store/memory.js';
import { represent } from '../../lib/protocol/representation.js';

function page(text: string): BuiltPage {
  return { representation: represent(text), contentType: 'application/json' };
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
    assert.equal(cache.get('products', 'k')?.representation.bytes.toString(), '{"value":[]}');
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
