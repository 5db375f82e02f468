// Tests for lib/seed.ts: `--seed PATH` (CONVENTIONS.md#command-line), a folder of JSON arrays named
// after their collections or a json-server style db.json, loaded into a store that is still empty.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadSeed } from '../lib/seed.js';
import { clockAt } from './support/clock.js';
import { withTempDir } from './support/temp-dir.js';
import { RepresentationCache } from '../lib/resources/representation-cache.js';
import { Writer } from '../lib/writes/writer.js';
import type { Store } from '../lib/store/types.js';
import { MemoryStore } from '../lib/store/memory.js';
import { isResourceId } from '../lib/names.js';
import type { SeedResult } from '../lib/seed.js';

const NOW = 1_700_000_000_000;

let root = '';
let counter = 0;

/** A fresh folder under the test root holding `files` (name → content; objects are written as JSON). */
async function folder(files: Record<string, unknown>): Promise<string> {
  const dir = join(root, `case-${counter++}`);
  await mkdir(dir);
  for (const [name, content] of Object.entries(files)) {
    await writeFile(join(dir, name), typeof content === 'string' ? content : JSON.stringify(content));
  }
  return dir;
}

/** loadSeed through the write path of a server with no collection config, on a clock reading `now`. */
function seed(store: Store, path: string, now: () => number = () => NOW): Promise<SeedResult> {
  const clock = clockAt(now);
  const writer = new Writer({ store, clock, representations: new RepresentationCache(), collectionConfig: () => undefined });
  return loadSeed(writer, store, path, clock);
}

function failureOf(result: SeedResult): string {
  assert.equal(result.ok, false, JSON.stringify(result));
  return result.ok ? '' : result.message;
}

function idsOf(store: MemoryStore, collection: string): string[] {
  return store.scan(collection).map((record) => record.id);
}

/**
 * A withTempDir folder held from before() to after(): `open` resolves with its path once it exists,
 * `close` lets withTempDir's callback return, so the folder is removed.
 */
function heldTempDir(name: string): { open: () => Promise<string>; close: () => Promise<void> } {
  let release = (): void => {};
  let removed: Promise<void> = Promise.resolve();
  return {
    open: () =>
      new Promise<string>((resolve, reject) => {
        const held = new Promise<void>((done) => (release = done));
        removed = withTempDir(name, async (dir) => {
          resolve(dir);
          await held;
        });
        removed.catch(reject);
      }),
    close: async () => {
      release();
      await removed;
    },
  };
}

const rootDir = heldTempDir('seed-test');

before(async () => {
  root = await rootDir.open();
});

after(() => rootDir.close());

describe('loadSeed', () => {
  it('should load a folder with one array per collection, named after the file', async () => {
    const dir = await folder({
      'products.json': [{ id: 'p1', name: 'Pen' }, { id: 'p2', name: 'Ink' }],
      'orders.json': [{ id: 'o1', product: 'p1' }],
      'README.md': '# not data',
      'notes.txt': 'ignored',
    });
    const store = new MemoryStore();
    assert.deepEqual(await seed(store, dir), { ok: true, loaded: 3 });
    assert.deepEqual(store.collections(), ['$fields', '$meta', 'orders', 'products']);
    assert.deepEqual(idsOf(store, 'products'), ['p1', 'p2']);
    assert.deepEqual(store.get('products', 'p1')?.doc, { id: 'p1', name: 'Pen' });
    assert.deepEqual(store.get('orders', 'o1')?.doc, { id: 'o1', product: 'p1' });
  });

  it('should load a json-server style db.json', async () => {
    const dir = await folder({ 'db.json': { posts: [{ id: 1, title: 'a' }], comments: [{ id: 1, postId: 1 }, { id: 2, postId: 1 }] } });
    const store = new MemoryStore();
    assert.deepEqual(await seed(store, join(dir, 'db.json')), { ok: true, loaded: 3 });
    assert.deepEqual(store.collections(), ['$fields', '$meta', 'comments', 'posts']);
    assert.deepEqual(store.get('posts', '1')?.doc, { id: '1', title: 'a' });
  });

  it("should load json-server's example db.json, skipping its singular resource with a note", async () => {
    const dir = await folder({ 'db.json': { posts: [{ id: 1, title: 'a' }], profile: { name: 'typicode' } } });
    const store = new MemoryStore();
    const result = await seed(store, join(dir, 'db.json'));
    assert.deepEqual(result, { ok: true, loaded: 1, notes: [`seed ${join(dir, 'db.json')}: 'profile' is not an array of items (a json-server singular resource); skipped`] });
    assert.equal(store.get('profile', 'name'), undefined);
  });

  it('should store numeric ids as strings, in the doc as well as the path', async () => {
    const dir = await folder({ 'items.json': [{ id: 1 }, { id: 20 }, { id: -3 }] });
    const store = new MemoryStore();
    assert.deepEqual(await seed(store, dir), { ok: true, loaded: 3 });
    assert.deepEqual(idsOf(store, 'items'), ['-3', '1', '20']);
    for (const id of ['1', '20', '-3']) assert.equal(store.get('items', id)?.doc['id'], id);
  });

  it('should give an item without an id a generated, valid, time-ordered id', async () => {
    const dir = await folder({ 'notes.json': [{ text: 'a' }, { text: 'b' }] });
    const store = new MemoryStore();
    assert.deepEqual(await seed(store, dir, () => NOW), { ok: true, loaded: 2 });
    const records = store.scan('notes');
    assert.equal(records.length, 2);
    assert.notEqual(records[0]?.id, records[1]?.id);
    for (const record of records) {
      assert.equal(record.id.length, 26);
      assert.equal(isResourceId(record.id), true);
      assert.equal(record.doc['id'], record.id);
    }
    const earlier = await folder({ 'notes.json': [{ text: 'c' }] });
    const other = new MemoryStore();
    await seed(other, earlier, () => NOW - 1);
    assert.ok((other.scan('notes')[0]?.id ?? '') < (records[0]?.id ?? ''), 'an earlier clock gives a smaller id');
  });

  it('should refuse a repeated id with a message naming the file, and load nothing', async () => {
    const dir = await folder({ 'a.json': [{ id: 'x' }], 'products.json': [{ id: 1 }, { id: '1' }] });
    const store = new MemoryStore();
    const message = failureOf(await seed(store, dir));
    assert.ok(message.includes(join(dir, 'products.json')), message);
    assert.match(message, /repeats id '1'/);
    assert.deepEqual(store.collections(), []);
  });

  it('should refuse a repeated id in a db.json, naming the file', async () => {
    const dir = await folder({ 'db.json': { users: [{ id: 'u' }, { id: 'u' }] } });
    const file = join(dir, 'db.json');
    const message = failureOf(await seed(new MemoryStore(), file));
    assert.ok(message.includes(file), message);
    assert.match(message, /users\[1\] repeats id 'u'/);
  });

  it('should allow the same id in two collections', async () => {
    const dir = await folder({ 'a.json': [{ id: '1' }], 'b.json': [{ id: '1' }] });
    assert.deepEqual(await seed(new MemoryStore(), dir), { ok: true, loaded: 2 });
  });

  it('should refuse an id that is not a valid resource id, naming the file and item', async () => {
    for (const id of ['a/b', '..', 'x'.repeat(129), 1.5e21]) {
      const dir = await folder({ 'things.json': [{ id: 'ok' }, { id }] });
      const store = new MemoryStore();
      const message = failureOf(await seed(store, dir));
      assert.ok(message.includes(join(dir, 'things.json')), message);
      assert.match(message, /things\[1\] has an invalid id/);
      assert.deepEqual(store.collections(), []);
    }
  });

  it('should refuse a file name that is not a valid collection name', async () => {
    const dir = await folder({ '1bad.json': [{ id: 'a' }] });
    assert.match(failureOf(await seed(new MemoryStore(), dir)), /'1bad' is not a valid collection name/);
  });

  it('should refuse a db.json key that is a system name or not a collection name', async () => {
    for (const name of ['$inbox', 'has space']) {
      const dir = await folder({ 'db.json': { [name]: [{ id: 'a' }] } });
      assert.match(failureOf(await seed(new MemoryStore(), join(dir, 'db.json'))), /not a valid collection name/, name);
    }
  });

  it('should refuse a collection that is not an array, or an item that is not an object', async () => {
    const notArray = await folder({ 'products.json': { id: 'a' } });
    assert.match(failureOf(await seed(new MemoryStore(), notArray)), /"products" must be an array/);
    const notObject = await folder({ 'products.json': [{ id: 'a' }, 'b'] });
    assert.match(failureOf(await seed(new MemoryStore(), notObject)), /products\[1\] is not an object/);
    const nested = await folder({ 'products.json': [[{ id: 'a' }]] });
    assert.match(failureOf(await seed(new MemoryStore(), nested)), /products\[0\] is not an object/);
  });

  it('should refuse a db.json that is not an object of arrays', async () => {
    const dir = await folder({ 'db.json': [{ id: 'a' }] });
    assert.match(failureOf(await seed(new MemoryStore(), join(dir, 'db.json'))), /must be an object of arrays/);
  });

  it('should refuse a number a double cannot hold exactly, naming the file and where (two ids 2^53 and 2^53+1 would collide)', async () => {
    const dir = await folder({ 'big.json': '[{"id": 9007199254740992}, {"id": 9007199254740993}]' });
    const message = failureOf(await seed(new MemoryStore(), dir));
    assert.ok(message.includes(join(dir, 'big.json')), message);
    assert.match(message, /number cannot be stored exactly at offset \d+ \(\/1\/id\)/);
  });

  it('should give its own words and the offset for malformed JSON, not the parser message', async () => {
    const dir = await folder({ 'broken.json': '[{"secret": }]' });
    const message = failureOf(await seed(new MemoryStore(), dir));
    assert.match(message, /not valid JSON: unexpected character at offset 12/);
    assert.doesNotMatch(message, /Unexpected token/);
  });

  it('should refuse malformed JSON, naming the file', async () => {
    const dir = await folder({ 'ok.json': [], 'broken.json': '[{"id": "a",]' });
    const message = failureOf(await seed(new MemoryStore(), dir));
    assert.ok(message.includes(join(dir, 'broken.json')), message);
  });

  it('should refuse a path that does not exist, naming it', async () => {
    const missing = join(root, 'no-such-folder');
    const message = failureOf(await seed(new MemoryStore(), missing));
    assert.ok(message.includes(missing), message);
  });

  it('should load nothing from an empty folder or empty arrays', async () => {
    const empty = await folder({});
    assert.deepEqual(await seed(new MemoryStore(), empty), { ok: true, loaded: 0 });
    const store = new MemoryStore();
    assert.deepEqual(await seed(store, await folder({ 'products.json': [] })), { ok: true, loaded: 0 });
    assert.deepEqual(store.collections(), []);
  });

  it('should leave a store that already holds a user collection alone', async () => {
    const store = new MemoryStore();
    await store.commit({ mutations: [{ kind: 'put', collection: 'products', id: 'mine', doc: { id: 'mine' } }] });
    const dir = await folder({ 'products.json': [{ id: 'seeded' }], 'orders.json': [{ id: 'o1' }] });
    assert.deepEqual(await seed(store, dir), { ok: true, loaded: 0 });
    assert.deepEqual(store.collections(), ['products']);
    assert.deepEqual(idsOf(store, 'products'), ['mine']);
  });

  it('should not check the seed at all when the store is not empty', async () => {
    const store = new MemoryStore();
    await store.commit({ mutations: [{ kind: 'put', collection: 'products', id: 'mine', doc: { id: 'mine' } }] });
    assert.deepEqual(await seed(store, join(root, 'no-such-folder')), { ok: true, loaded: 0 });
  });

  it('should not seed again a store whose items were all deleted', async () => {
    // `npm start` passes --seed on every start: deleted sample data must not come back on a restart.
    const store = new MemoryStore();
    const dir = await folder({ 'products.json': [{ id: 'p1' }] });
    assert.deepEqual(await seed(store, dir), { ok: true, loaded: 1 });
    await store.commit({ mutations: [{ kind: 'delete', collection: 'products', id: 'p1', retainUntil: Date.now() + 60_000 }] });
    assert.deepEqual(await seed(store, dir), { ok: true, loaded: 0 });
    assert.equal(store.get('products', 'p1'), undefined);
  });

  it('should seed a store that holds only system records', async () => {
    const store = new MemoryStore();
    await store.commit({ mutations: [{ kind: 'put', collection: '$idempotency', id: 'k', doc: { id: 'k' } }] });
    const dir = await folder({ 'products.json': [{ id: 'p1' }] });
    assert.deepEqual(await seed(store, dir), { ok: true, loaded: 1 });
    assert.deepEqual(idsOf(store, 'products'), ['p1']);
  });

  it('should write the whole seed in one atomic commit', async () => {
    const store = new MemoryStore();
    const commits: number[] = [];
    store.watch((commit) => commits.push(commit.applied.length));
    const dir = await folder({ 'a.json': [{ id: '1' }, { id: '2' }], 'b.json': [{ id: '3' }] });
    await seed(store, dir);
    // Three items, the seed marker and the two collections' field registrations, together.
    assert.deepEqual(commits, [6]);
  });
});
