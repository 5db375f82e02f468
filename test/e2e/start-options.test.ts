// start()'s options (CONVENTIONS.md#embedding, CONVENTIONS.md#configuration-file): a misspelt key
// fails twice. For TypeScript callers at compile time: each `@ts-expect-error` below is itself an
// error once the misspelling compiles again, so `npm run build` fails if StartOptions ever gains an
// index signature. For JavaScript callers at run time: the refusal names the key and lists every key
// start() knows, its own (port, host, memory…) and the configuration's.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { start, type ConfigOptions, type StartOptions } from '../../lib/index.js';
import { DEFAULT_CONFIG } from '../../lib/config.js';
import { silentLogger } from '../../lib/log.js';

const OWN_KEYS = ['host', 'port', 'dataDir', 'memory', 'store', 'baseUrl', 'noCacheMode', 'seed', 'apiKeys'];

/** Never called: only compiled. Every literal here is what a caller writes. */
export function misspellingsDoNotCompile(): StartOptions[] {
  return [
    // The well-spelt options compile, nested configuration included.
    {
      port: 0,
      memory: true,
      tombstoneDays: 7,
      pageSize: { max: 20 },
      collections: { products: { cacheControl: 'public, max-age=60', schema: { price: 'number' } } },
      webhooks: { retry: { attempts: 3 } },
      limits: { maxPropertyNames: { document: 10 } },
    },
    // @ts-expect-error: `prot` is not an option (port).
    { prot: 3000 },
    // @ts-expect-error: `dataDri` is not an option (dataDir).
    { dataDri: 'data' },
    // @ts-expect-error: `tombstoneDay` is not a configuration key (tombstoneDays).
    { tombstoneDay: 7 },
    // @ts-expect-error: nested keys are checked too (pageSize.max).
    { pageSize: { maximum: 20 } },
    // @ts-expect-error: nested keys are checked too (webhooks.retry.attempts).
    { webhooks: { retry: { attempt: 3 } } },
    // @ts-expect-error: a collection's keys are checked (cacheControl).
    { collections: { products: { cachecontrol: 'no-store' } } },
    // @ts-expect-error: a value of the wrong type.
    { memory: 'yes' },
  ];
}

/** Never called: a key that is not an option is not a key of the type either (no index signature). */
export function noIndexSignature(): [keyof StartOptions, keyof ConfigOptions] {
  // @ts-expect-error: `prot` is not a key of StartOptions.
  const option: keyof StartOptions = 'prot';
  // @ts-expect-error: `port` is start()'s own, not a configuration key.
  const configKey: keyof ConfigOptions = 'port';
  return [option, configKey];
}

describe('start() options', () => {
  it('should refuse a misspelt key naming it and listing every known key, its own and the configuration\'s', async () => {
    const misspelt = { prot: 3000, memory: true, log: silentLogger } as unknown as StartOptions;
    await assert.rejects(start(misspelt), (error: unknown) => {
      assert.ok(error instanceof TypeError);
      assert.match(error.message, /^start\(\): prot is not a known key \(did you mean port\?\); known keys: /);
      const listed = (error.message.split('known keys: ')[1] ?? '').split(', ');
      for (const key of [...OWN_KEYS, ...Object.keys(DEFAULT_CONFIG)]) assert.ok(listed.includes(key), key);
      return true;
    });
  });

  it('should name an unknown key without a suggestion when no known key is close', async () => {
    const unknown = { colour: 'red', memory: true, log: silentLogger } as unknown as StartOptions;
    await assert.rejects(start(unknown), { name: 'TypeError', message: /^start\(\): colour is not a known key; known keys: host, port/ });
  });

  it('should still name a nested unknown key by its dotted path', async () => {
    const nested = { pageSize: { maximum: 20 }, memory: true, log: silentLogger } as unknown as StartOptions;
    await assert.rejects(start(nested), { name: 'TypeError', message: /^start\(\): pageSize\.maximum is not a known key \(known keys: default, max\)/ });
  });

  it('should take "__proto__" as a key, refused like any other', async () => {
    const polluted = { ...JSON.parse('{"__proto__": {"memory": false}}'), memory: true, log: silentLogger } as StartOptions;
    await assert.rejects(start(polluted), { name: 'TypeError', message: /^start\(\): __proto__ is not a known key/ });
  });
});
