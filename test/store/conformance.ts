// The Store conformance suite (one interface, one shared suite, every implementation).
// Not a test file itself: memory.test.ts and file.test.ts call storeConformance with a function that
// runs a test on a fresh store of their kind.
// Every method of the Store interface (lib/store/types.ts) is covered here; durability is not (it
// belongs to file.test.ts, crash.test.ts and recovery.test.ts).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Clock } from '../../lib/clock.js';
import type { JsonObject } from '../../lib/json.js';
import type { Logger } from '../../lib/log.js';
import { documentText, loadedFrame, type LoadedFrame } from '../../lib/store/state.js';
import type { Batch, Commit, CommitResult, Mutation, Store, StoredRecord } from '../../lib/store/types.js';
import { clockAt } from '../support/clock.js';
import { readable } from '../support/store.js';

/**
 * Runs `run` on a fresh, empty store on `clock` (expiry tests move it) that logs to `log`, then closes
 * the store and removes whatever it left behind, whether `run` passed or threw.
 */
export type WithStore = (options: { readonly clock: Clock; readonly log: Logger }, run: (store: Store) => Promise<void>) => Promise<void>;

const T0 = 1_700_000_000_000;

interface Harness {
  readonly store: Store;
  /** Moves the store's clock forward. */
  advance(ms: number): void;
  readonly time: () => number;
  /** Messages the store logged. */
  readonly logged: readonly string[];
}

function put(collection: string, id: string, doc: JsonObject, extra: Partial<Extract<Mutation, { kind: 'put' }>> = {}): Mutation {
  return { kind: 'put', collection, id, doc, ...extra };
}

async function ok(store: Store, ...mutations: Mutation[]): Promise<Commit> {
  const result = await store.commit({ mutations });
  assert.equal(result.ok, true, `commit failed: ${JSON.stringify(result)}`);
  return (result as Extract<CommitResult, { ok: true }>).commit;
}

export function storeConformance(name: string, withFreshStore: WithStore): void {
  const withStore = (run: (harness: Harness) => Promise<void>) => async () => {
    let time = T0;
    const logged: string[] = [];
    await withFreshStore({ clock: clockAt(() => time), log: (_level, message) => void logged.push(message) }, (store) =>
      run({ store, advance: (ms) => void (time += ms), time: () => time, logged }),
    );
  };

  describe(`${name} (Store conformance)`, () => {
    describe('put and get', () => {
      it('should return the stored record with its version, time and document', withStore(async ({ store }) => {
        const commit = await ok(store, put('items', 'a', { id: 'a', n: 1 }));
        assert.deepEqual(readable(store.get('items', 'a')), { collection: 'items', id: 'a', version: commit.seq, modifiedAt: T0, doc: { id: 'a', n: 1 } });
        assert.equal(commit.at, T0);
      }));

      it('should return undefined for a record never written', withStore(async ({ store }) => {
        await ok(store, put('items', 'a', { n: 1 }));
        assert.equal(store.get('items', 'b'), undefined);
        assert.equal(store.get('other', 'a'), undefined);
      }));

      it('should store __proto__ keys, ids and collections as plain data', withStore(async ({ store }) => {
        const doc = JSON.parse('{"__proto__":{"polluted":true},"n":1}') as JsonObject;
        await ok(store, put('__proto__', '__proto__', doc), put('items', 'constructor', doc));
        for (const record of [store.get('__proto__', '__proto__'), store.get('items', 'constructor')]) {
          assert.ok(record !== undefined);
          assert.equal(Object.getPrototypeOf(record.doc), Object.prototype);
          assert.deepEqual(Object.getOwnPropertyDescriptor(record.doc, '__proto__')?.value, { polluted: true });
        }
        assert.equal(({} as Record<string, unknown>).polluted, undefined);
        assert.deepEqual(store.collections(), ['__proto__', 'items']);
      }));
    });

    describe('expectations', () => {
      it('should create with { absent } only while the record is absent', withStore(async ({ store }) => {
        const first = await ok(store, put('items', 'a', { n: 1 }, { expect: { absent: true } }));
        const second = await store.commit({ mutations: [put('items', 'a', { n: 2 }, { expect: { absent: true } })] });
        assert.deepEqual(second, { ok: false, reason: 'conflict', index: 0, current: store.get('items', 'a') });
        assert.equal(store.get('items', 'a')?.version, first.seq);
      }));

      it('should require { present } to find the record', withStore(async ({ store }) => {
        const missing = await store.commit({ mutations: [put('items', 'a', { n: 1 }, { expect: { present: true } })] });
        assert.deepEqual(missing, { ok: false, reason: 'conflict', index: 0 });
        await ok(store, put('items', 'a', { n: 1 }));
        await ok(store, put('items', 'a', { n: 2 }, { expect: { present: true } }));
        assert.deepEqual(store.get('items', 'a')?.doc, { n: 2 });
      }));

      it('should compare { version } with the stored version', withStore(async ({ store }) => {
        const created = await ok(store, put('items', 'a', { n: 1 }));
        const replaced = await ok(store, put('items', 'a', { n: 2 }, { expect: { version: created.seq } }));
        const stale = await store.commit({ mutations: [put('items', 'a', { n: 3 }, { expect: { version: created.seq } })] });
        assert.equal(stale.ok, false);
        assert.equal(stale.ok === false && stale.reason === 'conflict' && stale.current?.version, replaced.seq);
        assert.deepEqual(store.get('items', 'a')?.doc, { n: 2 });
      }));

      it('should apply nothing of a batch whose later expectation fails', withStore(async ({ store }) => {
        const before = await ok(store, put('items', 'taken', { n: 0 }));
        const seen: number[] = [];
        store.watch((commit) => seen.push(commit.seq));
        const result = await store.commit({
          mutations: [put('items', 'x', { n: 1 }), { kind: 'delete', collection: 'items', id: 'taken' }, put('items', 'y', { n: 2 }, { expect: { version: 12345 } })],
        });
        assert.deepEqual(result, { ok: false, reason: 'conflict', index: 2 });
        assert.equal(store.get('items', 'x'), undefined);
        assert.deepEqual(store.get('items', 'taken')?.doc, { n: 0 });
        assert.deepEqual(seen, []);
        const after = await ok(store, put('items', 'y', { n: 1 }));
        assert.equal(after.seq, before.seq + 1);
      }));

      it('should let later mutations of a batch see the earlier ones', withStore(async ({ store }) => {
        await ok(store, put('items', 'a', { n: 1 }), put('items', 'a', { n: 2 }, { expect: { present: true } }));
        await ok(store, { kind: 'delete', collection: 'items', id: 'a' }, put('items', 'a', { n: 3 }, { expect: { absent: true } }));
        assert.deepEqual(store.get('items', 'a')?.doc, { n: 3 });
      }));

      it('should let exactly one of many concurrent creates of one id succeed', withStore(async ({ store }) => {
        const results = await Promise.all(
          Array.from({ length: 20 }, (_, n) => store.commit({ mutations: [put('items', 'a', { n }, { expect: { absent: true } })] })),
        );
        const winners = results.filter((result) => result.ok);
        assert.equal(winners.length, 1);
        assert.ok(results.every((result) => result.ok || result.reason === 'conflict'));
        assert.equal(store.get('items', 'a')?.version, winners[0]?.ok === true ? winners[0].commit.seq : -1);
      }));
    });

    describe('collection expectations (Batch.unchanged)', () => {
      it('should move collectionVersion with every commit that touches the collection, and only those', withStore(async ({ store }) => {
        assert.equal(store.collectionVersion('items'), 0);
        const first = await ok(store, put('items', 'a', { n: 1 }));
        assert.equal(store.collectionVersion('items'), first.seq);
        await ok(store, put('other', 'x', { n: 1 }));
        assert.equal(store.collectionVersion('items'), first.seq);
        const deleted = await ok(store, { kind: 'delete', collection: 'items', id: 'a' });
        assert.equal(store.collectionVersion('items'), deleted.seq);
      }));

      it('should apply a batch only while its collection is unchanged, failing it whole with index -1', withStore(async ({ store }) => {
        await ok(store, put('items', 'a', { n: 1 }));
        const version = store.collectionVersion('items');
        await ok(store, put('items', 'b', { n: 2 }));
        const stale = await store.commit({ mutations: [put('items', 'c', { n: 3 }), put('log', 'c', {})], unchanged: { collection: 'items', version } });
        assert.deepEqual(stale, { ok: false, reason: 'conflict', index: -1 });
        assert.equal(store.get('items', 'c'), undefined);
        assert.equal(store.get('log', 'c'), undefined);
        const current = store.collectionVersion('items');
        await ok(store, put('other', 'x', { n: 1 }));
        const fresh = await store.commit({ mutations: [put('items', 'c', { n: 3 })], unchanged: { collection: 'items', version: current } });
        assert.equal(fresh.ok, true);
      }));

      // The file store checks a group's batches against the state before the group: a batch expecting
      // the collection unchanged must not join a group whose earlier member touches it.
      it('should let exactly one of many concurrent batches expecting one collection version succeed', withStore(async ({ store }) => {
        await ok(store, put('items', 'a', { n: 0 }));
        const version = store.collectionVersion('items');
        const results = await Promise.all(
          Array.from({ length: 10 }, (_, n) => store.commit({ mutations: [put('items', `new-${n}`, { n })], unchanged: { collection: 'items', version } })),
        );
        assert.equal(results.filter((result) => result.ok).length, 1, JSON.stringify(results.map((result) => result.ok)));
        assert.equal(store.count('items'), 2);
      }));

      it('should let a batch expecting one collection unchanged share a commit with writes to others', withStore(async ({ store }) => {
        const version = store.collectionVersion('items');
        const results = await Promise.all([
          store.commit({ mutations: [put('other', 'x', { n: 1 })] }),
          store.commit({ mutations: [put('items', 'a', { n: 1 })], unchanged: { collection: 'items', version } }),
        ]);
        assert.deepEqual(results.map((result) => result.ok), [true, true]);
      }));

      it('should refuse a malformed expectation with a TypeError', withStore(async ({ store }) => {
        const malformed = { mutations: [put('items', 'a', {})], unchanged: { collection: 'items', version: '3' } } as unknown as Batch;
        assert.throws(() => void store.commit(malformed), { name: 'TypeError', message: /unchanged/ });
      }));
    });

    describe('batches and versions', () => {
      it('should apply every mutation of a batch under one version, in order', withStore(async ({ store }) => {
        await ok(store, put('items', 'b', { n: 0 }));
        const commit = await ok(store, put('items', 'a', { n: 1 }), put('items', 'b', { n: 2 }), put('$outbox', 'e1', { event: 'x' }));
        assert.deepEqual(commit.applied.map((applied) => [applied.record?.id, applied.record?.version, applied.previous?.doc]), [
          ['a', commit.seq, undefined],
          ['b', commit.seq, { n: 0 }],
          ['e1', commit.seq, undefined],
        ]);
        assert.equal(store.get('$outbox', 'e1')?.version, commit.seq);
      }));

      it('should give strictly increasing versions, also to concurrent commits', withStore(async ({ store }) => {
        const results = await Promise.all(Array.from({ length: 30 }, (_, n) => ok(store, put('items', `k${n % 7}`, { n }))));
        const seqs = results.map((commit) => commit.seq);
        assert.deepEqual(seqs, [...seqs].sort((a, b) => a - b));
        assert.equal(new Set(seqs).size, seqs.length);
        const later = await ok(store, put('items', 'z', {}));
        assert.ok(later.seq > Math.max(...seqs));
      }));
    });

    describe('delete and restore', () => {
      it('should delete without a trace when no retainUntil is given', withStore(async ({ store }) => {
        await ok(store, put('items', 'a', { n: 1 }));
        const commit = await ok(store, { kind: 'delete', collection: 'items', id: 'a' });
        assert.equal(store.get('items', 'a'), undefined);
        assert.equal(store.getTombstone('items', 'a'), undefined);
        assert.deepEqual(commit.applied[0]?.previous?.doc, { n: 1 });
      }));

      it('should keep a tombstone with the deleted document', withStore(async ({ store, advance }) => {
        const created = await ok(store, put('items', 'a', { n: 1 }));
        advance(10);
        const deleted = await ok(store, { kind: 'delete', collection: 'items', id: 'a', expect: { version: created.seq }, retainUntil: T0 + 1000 });
        assert.deepEqual(store.getTombstone('items', 'a'), {
          collection: 'items', id: 'a', version: deleted.seq, deletedAt: T0 + 10, retainUntil: T0 + 1000, doc: { n: 1 },
        });
      }));

      it('should succeed deleting an absent record, leaving no tombstone', withStore(async ({ store }) => {
        await ok(store, { kind: 'delete', collection: 'items', id: 'ghost', retainUntil: T0 + 1000 });
        assert.equal(store.getTombstone('items', 'ghost'), undefined);
      }));

      it('should restore a tombstoned record under a new version', withStore(async ({ store }) => {
        await ok(store, put('items', 'a', { n: 1 }));
        await ok(store, { kind: 'delete', collection: 'items', id: 'a', retainUntil: T0 + 1000 });
        const restored = await ok(store, { kind: 'restore', collection: 'items', id: 'a' });
        assert.deepEqual(readable(store.get('items', 'a')), { collection: 'items', id: 'a', version: restored.seq, modifiedAt: T0, doc: { n: 1 } });
        assert.equal(store.getTombstone('items', 'a')?.restoredVersion, restored.seq);
      }));

      it('should refuse to restore over a record that exists again', withStore(async ({ store }) => {
        await ok(store, put('items', 'a', { n: 1 }));
        await ok(store, { kind: 'delete', collection: 'items', id: 'a', retainUntil: T0 + 1000 });
        await ok(store, put('items', 'a', { n: 2 }));
        const result = await store.commit({ mutations: [{ kind: 'restore', collection: 'items', id: 'a' }] });
        assert.deepEqual(result, { ok: false, reason: 'conflict', index: 0, current: store.get('items', 'a') });
        assert.deepEqual(store.get('items', 'a')?.doc, { n: 2 });
      }));

      it('should refuse to restore without a tombstone', withStore(async ({ store }) => {
        await ok(store, put('items', 'a', { n: 1 }));
        await ok(store, { kind: 'delete', collection: 'items', id: 'a' });
        const result = await store.commit({ mutations: [{ kind: 'restore', collection: 'items', id: 'a' }] });
        assert.deepEqual(result, { ok: false, reason: 'conflict', index: 0 });
      }));

      it('should forget a tombstone once retainUntil has passed', withStore(async ({ store, advance }) => {
        await ok(store, put('items', 'a', { n: 1 }));
        await ok(store, { kind: 'delete', collection: 'items', id: 'a', retainUntil: T0 + 1000 });
        advance(999);
        assert.notEqual(store.getTombstone('items', 'a'), undefined);
        advance(1);
        assert.equal(store.getTombstone('items', 'a'), undefined);
        const result = await store.commit({ mutations: [{ kind: 'restore', collection: 'items', id: 'a' }] });
        assert.deepEqual(result, { ok: false, reason: 'conflict', index: 0 });
      }));
    });

    describe('record expiry', () => {
      it('should read a record as absent once it expires', withStore(async ({ store, advance }) => {
        await ok(store, put('$idem', 'k', { status: 201 }, { expiresAt: T0 + 500 }), put('$idem', 'keep', { status: 200 }));
        assert.equal(store.get('$idem', 'k')?.expiresAt, T0 + 500);
        advance(500);
        assert.equal(store.get('$idem', 'k'), undefined);
        assert.deepEqual(store.scan('$idem').map((record) => record.id), ['keep']);
        await ok(store, put('$idem', 'k', { status: 200 }, { expect: { absent: true } }));
      }));
    });

    describe('scan and count', () => {
      const ids = ['b', 'a', 'Z', '0', 'a~', 'a-b', 'a.b', 'a_b', 'ab', '~', '10', '9'];

      it('should return records in ascending code-unit order of id', withStore(async ({ store }) => {
        for (const id of ids) await ok(store, put('items', id, { id }));
        assert.deepEqual(store.scan('items').map((record) => record.id), [...ids].sort());
        assert.equal(store.count('items'), ids.length);
      }));

      it('should start strictly after `after` and stop at `limit`', withStore(async ({ store }) => {
        await ok(store, ...ids.map((id) => put('items', id, { id })));
        const sorted = [...ids].sort();
        assert.deepEqual(store.scan('items', { after: 'a', limit: 3 }).map((record) => record.id), sorted.slice(sorted.indexOf('a') + 1, sorted.indexOf('a') + 4));
        assert.deepEqual(store.scan('items', { after: 'aa' }).map((record) => record.id), sorted.filter((id) => id > 'aa'));
        assert.deepEqual(store.scan('items', { after: '~' }), []);
        assert.deepEqual(store.scan('items', { limit: 0 }), []);
      }));

      it('should keep order and count through deletes and re-creates', withStore(async ({ store }) => {
        await ok(store, put('items', 'c', {}), put('items', 'a', {}), put('items', 'b', {}));
        await ok(store, { kind: 'delete', collection: 'items', id: 'b' });
        await ok(store, put('items', 'bb', {}));
        assert.deepEqual(store.scan('items').map((record) => record.id), ['a', 'bb', 'c']);
        assert.equal(store.count('items'), 3);
        assert.equal(store.count('none'), 0);
        assert.deepEqual(store.scan('none'), []);
      }));
    });

    describe('documents kept as text', () => {
      it('should hold each written document as its JSON text afterwards, and read back every record as it was', withStore(async ({ store, advance }) => {
        // Enough ASCII documents for more than one payload, and documents that are not ASCII (one with a
        // character outside the BMP, two UTF-16 code units), whose payload is kept as text.
        const filler = 'x'.repeat(300);
        const ascii = Array.from({ length: 400 }, (_, n) => put('ascii', `item-${String(n).padStart(3, '0')}`, { n, filler }));
        await ok(store, ...ascii);
        advance(5);
        await ok(store,
          put('wide', 'b', { text: 'café 😀', n: 2 }),
          put('wide', 'a', { text: 'naïve', nested: { list: [1, 'ü'] } }),
          put('$jobs', 'due', { n: 3 }, { dueAt: T0 + 60_000, expiresAt: T0 + 120_000 }));
        const collections = ['ascii', 'wide', '$jobs'];
        const before = collections.map((collection) => store.scan(collection).map((record) => ({
          ...(readable(record) as JsonObject), text: documentText(record),
        })));

        store.keepDocumentsAsText();

        const kept = (collection: string, id: string): LoadedFrame | undefined => loadedFrame(store.get(collection, id) as StoredRecord);
        assert.ok(kept('ascii', 'item-000')?.payload instanceof Buffer, 'an all-ASCII payload is kept as bytes');
        assert.notEqual(kept('ascii', 'item-000'), kept('ascii', 'item-399'), 'payloads of about 64 KiB each');
        assert.equal(typeof kept('wide', 'a')?.payload, 'string', 'any other payload is kept as its text');
        assert.ok(kept('$jobs', 'due') !== undefined);
        // Read without parsing first (documentText), then whole (readable parses each document).
        const texts = collections.map((collection) => store.scan(collection).map((record) => documentText(record)));
        assert.deepEqual(texts, before.map((records) => records.map((record) => record.text)));
        const after = collections.map((collection) => store.scan(collection).map((record) => ({
          ...(readable(record) as JsonObject), text: documentText(record),
        })));
        assert.deepEqual(after, before);
        // A record read is an ordinary record again, and so is one written afterwards.
        assert.equal(kept('wide', 'b'), undefined);
        const patched = await ok(store, { kind: 'patch', collection: 'ascii', id: 'item-007', set: { n: 'seven' } });
        assert.deepEqual(store.get('ascii', 'item-007')?.doc, { n: 'seven', filler });
        assert.equal(store.get('ascii', 'item-007')?.version, patched.seq);
        assert.equal(store.nextDue('$jobs'), T0 + 60_000);
      }));
    });

    describe('collections and lastModified', () => {
      it('should list collections holding live records, sorted, system spaces included', withStore(async ({ store }) => {
        await ok(store, put('zeta', 'a', {}), put('alpha', 'a', {}), put('$outbox', 'a', {}), put('gone', 'a', {}));
        await ok(store, { kind: 'delete', collection: 'gone', id: 'a', retainUntil: T0 + 1000 });
        assert.deepEqual(store.collections(), ['$outbox', 'alpha', 'zeta']);
      }));

      it('should move lastModified on every change, deletes included', withStore(async ({ store, advance }) => {
        assert.equal(store.lastModified('items'), undefined);
        await ok(store, put('items', 'a', {}));
        assert.equal(store.lastModified('items'), T0);
        advance(100);
        await ok(store, { kind: 'delete', collection: 'items', id: 'a' });
        assert.equal(store.lastModified('items'), T0 + 100);
        assert.equal(store.lastModified('other'), undefined);
      }));
    });

    describe('watch', () => {
      it('should report every successful commit in commit order until unsubscribed', withStore(async ({ store }) => {
        const seen: Array<[number, string | undefined]> = [];
        const stop = store.watch((commit) => seen.push([commit.seq, commit.applied[0]?.mutation.id]));
        const commits = await Promise.all(['a', 'b', 'c', 'd'].map((id) => ok(store, put('items', id, {}))));
        await store.commit({ mutations: [put('items', 'a', {}, { expect: { absent: true } })] });
        stop();
        await ok(store, put('items', 'e', {}));
        assert.deepEqual(seen, commits.map((commit) => [commit.seq, commit.applied[0]?.mutation.id]));
      }));
    });

    describe('patch', () => {
      it('should set and unset top-level fields, keep the rest, and give a new version', withStore(async ({ store, advance }) => {
        const created = await ok(store, put('$inbox', 'e1', { body: { big: 'x'.repeat(1000) }, status: 'accepted', attempts: 0, lastError: 'x' }));
        advance(5);
        const patched = await ok(store, { kind: 'patch', collection: '$inbox', id: 'e1', set: { status: 'failed', attempts: 1 }, unset: ['lastError'] });
        const record = store.get('$inbox', 'e1');
        assert.deepEqual(record?.doc, { body: { big: 'x'.repeat(1000) }, status: 'failed', attempts: 1 });
        assert.equal(record?.version, patched.seq);
        assert.ok(patched.seq > created.seq);
        assert.equal(record?.modifiedAt, T0 + 5);
        assert.deepEqual(patched.applied[0]?.previous?.doc.status, 'accepted');
      }));

      it('should fail as a conflict when the record is absent, or its version is not the expected one', withStore(async ({ store }) => {
        const absent = await store.commit({ mutations: [{ kind: 'patch', collection: '$inbox', id: 'none', set: { status: 'x' } }] });
        assert.deepEqual(absent, { ok: false, reason: 'conflict', index: 0 });
        const created = await ok(store, put('$inbox', 'e1', { status: 'accepted' }));
        await ok(store, { kind: 'patch', collection: '$inbox', id: 'e1', set: { status: 'failed' } });
        const stale = await store.commit({ mutations: [{ kind: 'patch', collection: '$inbox', id: 'e1', set: { status: 'x' }, expect: { version: created.seq } }] });
        assert.equal(stale.ok === false && stale.reason, 'conflict');
        assert.deepEqual(store.get('$inbox', 'e1')?.doc, { status: 'failed' });
      }));

      it('should create an absent record with upsert, and merge concurrent upserts of it', withStore(async ({ store }) => {
        const results = await Promise.all(['a', 'b', 'c'].map((key) => store.commit({ mutations: [{ kind: 'patch', collection: '$fields', id: 'items', set: { [key]: 1 }, upsert: true }] })));
        assert.ok(results.every((result) => result.ok));
        assert.deepEqual(store.get('$fields', 'items')?.doc, { a: 1, b: 1, c: 1 });
        assert.deepEqual(store.scan('$fields').map((record) => record.id), ['items']);
      }));

      it('should keep a "__proto__" field it sets as plain data', withStore(async ({ store }) => {
        await ok(store, put('$inbox', 'e1', { n: 1 }));
        await ok(store, { kind: 'patch', collection: '$inbox', id: 'e1', set: JSON.parse('{"__proto__":{"polluted":true}}') as JsonObject });
        const doc = store.get('$inbox', 'e1')?.doc;
        assert.deepEqual(Object.getOwnPropertyDescriptor(doc, '__proto__')?.value, { polluted: true });
        assert.equal(({} as Record<string, unknown>).polluted, undefined);
        // A document holding one keeps it as data through a patch of other fields.
        await ok(store, { kind: 'patch', collection: '$inbox', id: 'e1', set: { n: 2 } });
        const patched = store.get('$inbox', 'e1')?.doc;
        assert.deepEqual(Object.getOwnPropertyDescriptor(patched, '__proto__')?.value, { polluted: true });
        assert.equal(Object.getPrototypeOf(patched), Object.prototype);
        assert.equal(patched?.['n'], 2);
      }));
    });

    describe('due records', () => {
      it('should list records due by now, earliest first, up to the limit', withStore(async ({ store, time }) => {
        await ok(store, put('$q', 'late', {}, { dueAt: time() + 100 }), put('$q', 'b', {}, { dueAt: time() - 5 }), put('$q', 'a', {}, { dueAt: time() - 10 }), put('$q', 'none', {}));
        assert.deepEqual(store.due('$q', time(), 10).map((record) => record.id), ['a', 'b']);
        assert.deepEqual(store.due('$q', time(), 1).map((record) => record.id), ['a']);
        assert.deepEqual(store.due('$q', time() + 100, 10).map((record) => record.id), ['a', 'b', 'late']);
        assert.equal(store.nextDue('$q'), time() - 10);
        assert.deepEqual(store.due('other', time(), 10), []);
        assert.equal(store.nextDue('other'), undefined);
      }));

      it('should follow a patch that moves or clears dueAt, and forget deleted records', withStore(async ({ store, time }) => {
        await ok(store, put('$q', 'a', { n: 1 }, { dueAt: time() }), put('$q', 'b', {}, { dueAt: time() }), put('$q', 'c', {}, { dueAt: time() }));
        await ok(store, { kind: 'patch', collection: '$q', id: 'a', set: { n: 2 }, dueAt: time() + 50 });
        await ok(store, { kind: 'patch', collection: '$q', id: 'b', set: {}, dueAt: null });
        await ok(store, { kind: 'delete', collection: '$q', id: 'c' });
        assert.deepEqual(store.due('$q', time(), 10), []);
        assert.equal(store.nextDue('$q'), time() + 50);
        const due = store.due('$q', time() + 50, 10);
        assert.deepEqual(due.map((record) => [record.id, record.doc.n, record.dueAt]), [['a', 2, time() + 50]]);
        await ok(store, { kind: 'patch', collection: '$q', id: 'a', set: { n: 3 } });
        assert.equal(store.get('$q', 'a')?.dueAt, time() + 50, 'a patch without dueAt keeps it');
      }));

      it('should stop listing a record once it expires', withStore(async ({ store, time, advance }) => {
        await ok(store, put('$q', 'a', {}, { dueAt: time(), expiresAt: time() + 10 }));
        advance(10);
        assert.deepEqual(store.due('$q', time(), 10), []);
        assert.equal(store.nextDue('$q'), undefined);
      }));
    });

    describe('side logs', () => {
      it('should read back appended entries in order', withStore(async ({ store }) => {
        assert.deepEqual(await store.readSideLog('dead-letter'), []);
        assert.deepEqual(await store.appendSideLog('dead-letter', { id: 'e1', error: 'line\nbreak' }), { ok: true });
        assert.deepEqual(await store.appendSideLog('dead-letter', { id: 'e2' }), { ok: true });
        await store.appendSideLog('outbox-dead-letter', { id: 'd1' });
        assert.deepEqual(await store.readSideLog('dead-letter'), [{ id: 'e1', error: 'line\nbreak' }, { id: 'e2' }]);
        assert.deepEqual(await store.readSideLog('outbox-dead-letter'), [{ id: 'd1' }]);
      }));

      it('should refuse a side log name that is not a plain file name', withStore(async ({ store }) => {
        for (const name of ['../x', 'Dead', '', 'a/b', 'a.jsonl']) {
          assert.throws(() => void store.appendSideLog(name, {}), TypeError, name);
        }
      }));
    });

    describe('one commit step', () => {
      it('should refuse a malformed batch with a TypeError, before anything is applied', withStore(async ({ store }) => {
        const malformed = { mutations: [{ kind: 'put', collection: 'items', id: 'a', doc: 5 }] } as unknown as Batch;
        assert.throws(() => void store.commit(malformed), { name: 'TypeError', message: /document/ });
        const badTime = { mutations: [{ kind: 'put', collection: 'items', id: 'a', doc: {}, expiresAt: Number.POSITIVE_INFINITY }] } as unknown as Batch;
        assert.throws(() => void store.commit(badTime), TypeError);
        assert.equal(store.get('items', 'a'), undefined);
      }));

      it('should apply and acknowledge a commit whose watcher throws, and log the throw', withStore(async ({ store, logged }) => {
        store.watch(() => {
          throw new Error('watcher bug');
        });
        const seen: number[] = [];
        store.watch((commit) => seen.push(commit.seq));
        const result = await store.commit({ mutations: [put('items', 'a', { n: 1 })] });
        assert.equal(result.ok, true);
        assert.deepEqual(store.get('items', 'a')?.doc, { n: 1 });
        assert.equal(seen.length, 1, 'later watchers still hear of the commit');
        assert.ok(logged.includes('a store watcher threw'), logged.join('; '));
      }));

      it('should leave expired records out of count() and collections()', withStore(async ({ store, time, advance }) => {
        await ok(store, put('$idem', 'a', {}, { expiresAt: time() + 10 }), put('$idem', 'b', {}, { expiresAt: time() + 20 }), put('items', 'x', {}));
        assert.equal(store.count('$idem'), 2);
        advance(10);
        assert.equal(store.count('$idem'), 1);
        advance(10);
        assert.equal(store.count('$idem'), 0);
        assert.deepEqual(store.collections(), ['items']);
      }));
    });

    describe('health and close', () => {
      it('should be writable while open and refuse commits after close', () =>
        withFreshStore({ clock: clockAt(() => T0), log: () => {} }, async (store) => {
          assert.deepEqual(await store.health(), { writable: true });
          const batch: Batch = { mutations: [put('items', 'a', { n: 1 })] };
          const pending = store.commit(batch);
          await store.close();
          assert.equal((await pending).ok, true);
          const late = await store.commit({ mutations: [put('items', 'b', {})] });
          assert.equal(late.ok === false && late.reason, 'unavailable');
          assert.equal((await store.health()).writable, false);
          assert.deepEqual(store.get('items', 'a')?.doc, { n: 1 });
        }));
    });
  });
}
