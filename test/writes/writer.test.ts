// Tests for lib/writes/writer.ts: the one write path validates every stored document, names the change
// that failed, commits everything (with the remembered outcome of a keyed request) as one batch, and
// hands the representation it computed to the cache.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { JsonObject } from '../../lib/json.js';
import { MemoryStore } from '../../lib/store/memory.js';
import { RepresentationCache } from '../../lib/resources/representation-cache.js';
import { IDEMPOTENCY_SPACE, IDEMPOTENCY_TTL_MS, Writer } from '../../lib/writes/writer.js';
import { ManualClock } from '../support/clock.js';

function setup(): { store: MemoryStore; writer: Writer; representations: RepresentationCache; clock: ManualClock } {
  const clock = new ManualClock();
  const store = new MemoryStore({ clock });
  const representations = new RepresentationCache();
  const writer = new Writer({ store, clock, representations, collectionConfig: (name) => (name === 'typed' ? { schema: { n: 'number' } } : undefined) });
  return { store, writer, representations, clock };
}

describe('Writer', () => {
  it('should commit every change in one batch and return the records in change order', async () => {
    const { store, writer } = setup();
    const result = await writer.write([
      { kind: 'put', collection: 'a', id: '1', doc: { id: '1' } },
      { kind: 'put', collection: 'b', id: '2', doc: { id: '2' } },
    ]);
    assert.ok(result.ok);
    assert.deepEqual(result.records.map((record) => record?.collection), ['a', 'b']);
    assert.equal(store.get('a', '1')?.version, store.get('b', '2')?.version, 'one commit');
  });

  it('should refuse the whole batch, naming the change, when one document is invalid', async () => {
    const { store, writer } = setup();
    const cases: { doc: JsonObject; collection: string; detail: string }[] = [
      { doc: { id: 'x', n: 'one' }, collection: 'typed', detail: 'must be number' },
      { doc: { id: 'other' }, collection: 'plain', detail: 'must be "x"' },
      { doc: { id: 'x', deep: JSON.parse('['.repeat(300) + ']'.repeat(300)) as [] }, collection: 'plain', detail: 'nested deeper than 256 levels' },
      { doc: { id: 'x', n: Number.POSITIVE_INFINITY }, collection: 'plain', detail: 'number out of range' },
    ];
    for (const { doc, collection, detail } of cases) {
      const result = await writer.write([{ kind: 'put', collection: 'ok', id: 'y', doc: { id: 'y' } }, { kind: 'put', collection, id: 'x', doc }]);
      assert.equal(result.ok === false && result.reason, 'invalid', detail);
      assert.equal(result.ok === false && result.reason === 'invalid' && result.index, 1, detail);
      assert.equal(result.ok === false && result.reason === 'invalid' && result.problem.errors?.[0]?.detail, detail);
      assert.equal(store.get('ok', 'y'), undefined, 'nothing of the batch is applied');
    }
  });

  it('should refuse a batch passing a property-name limit, naming the change, and store or record nothing of it', async () => {
    const clock = new ManualClock();
    const store = new MemoryStore({ clock });
    const writer = new Writer({ store, clock, representations: new RepresentationCache(), collectionConfig: () => undefined, propertyNames: { collection: 3, document: 3 } });
    assert.ok((await writer.write([{ kind: 'put', collection: 'c', id: 'a', doc: { id: 'a', x: 1 } }])).ok);
    const result = await writer.write([
      { kind: 'put', collection: 'c', id: 'b', doc: { id: 'b', x: 2 } },
      { kind: 'put', collection: 'c', id: 'd', doc: { id: 'd', y: 1, z: 1 } },
    ]);
    assert.ok(!result.ok && result.reason === 'invalid');
    assert.equal(result.index, 1);
    assert.match(result.problem.detail, /limits\.maxPropertyNames\.collection allows 3/);
    assert.equal(store.get('c', 'b'), undefined, 'nothing of the batch is applied');
    assert.deepEqual([...(writer.fields.paths('c') ?? [])].sort(), ['id', 'x']);
    assert.ok((await writer.write([{ kind: 'put', collection: 'c', id: 'd', doc: { id: 'd', y: 1 } }])).ok, 'the refused paths hold no room');
  });

  it("should leave the server's own records to their owners: no id or schema rule outside user collections", async () => {
    const { writer } = setup();
    assert.equal((await writer.write([{ kind: 'put', collection: '$queries', id: 'typed/q', doc: { filter: 'n gt 1' } }])).ok, true);
  });

  it('should refuse a patch of a user collection, which would bypass its rules, as a programmer error', async () => {
    const { writer } = setup();
    await assert.rejects(writer.write([{ kind: 'patch', collection: 'typed', id: 'x', set: { n: 'one' } }]), TypeError);
    await assert.rejects(writer.write([]), TypeError);
  });

  it('should add the remembered outcome to the same batch, expiring after 24 hours', async () => {
    const { store, writer, clock } = setup();
    const outcome = { id: 'k1', fingerprint: 'POST /a h', status: 201, headers: { Location: '/a/1' }, body: '{}' };
    const result = await writer.write([{ kind: 'put', collection: 'a', id: '1', doc: { id: '1' } }], { remember: outcome });
    assert.ok(result.ok);
    const record = store.get(IDEMPOTENCY_SPACE, 'k1');
    assert.equal(record?.version, store.get('a', '1')?.version);
    assert.equal(record?.expiresAt, clock.now() + IDEMPOTENCY_TTL_MS);
    assert.deepEqual(record?.doc, { fingerprint: 'POST /a h', status: 201, headers: { Location: '/a/1' }, body: '{}' });
    await writer.remember({ ...outcome, id: 'k2', status: 400 });
    assert.equal(store.get(IDEMPOTENCY_SPACE, 'k2')?.doc.status, 400);
  });

  it('should pass conflicts through with the index of the change', async () => {
    const { writer } = setup();
    await writer.write([{ kind: 'put', collection: 'a', id: '1', doc: { id: '1' } }]);
    const result = await writer.write([{ kind: 'put', collection: 'a', id: '2', doc: { id: '2' } }, { kind: 'put', collection: 'a', id: '1', doc: { id: '1' }, expect: { absent: true } }]);
    assert.equal(result.ok === false && result.reason === 'conflict' && result.index, 1);
  });

  it('should hand the cache the representation it computed for each stored document', async () => {
    const { writer, representations } = setup();
    const result = await writer.write([{ kind: 'put', collection: 'a', id: '1', doc: { id: '1', name: 'Cup' } }]);
    assert.ok(result.ok);
    const record = result.records[0];
    assert.ok(record !== undefined);
    const primed = representations.itemJson(record);
    assert.equal(primed.bytes.toString(), '{"id":"1","name":"Cup"}');
    assert.equal(representations.itemJson(record), primed, 'the same object: no second serialization');
  });
});
