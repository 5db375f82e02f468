import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Config } from '../lib/config.js';
import { DEFAULT_CONFIG, parseConfig, webhookSources } from '../lib/config.js';

function accepted(input: unknown): Config {
  const result = parseConfig(input);
  assert.ok(result.ok, `expected ${JSON.stringify(input)} to be accepted, got ${result.ok ? '' : result.message}`);
  return result.config;
}

/** Asserts a refusal naming `key`, with the key also at the start of the message. */
function refused(input: unknown, key: string, message?: RegExp): void {
  const result = parseConfig(input);
  assert.equal(result.ok, false, `expected ${JSON.stringify(input)} to be refused`);
  if (result.ok) return;
  assert.equal(result.key, key);
  assert.ok(result.message.startsWith(`${key} `), `message should name ${key}: ${result.message}`);
  if (message !== undefined) assert.match(result.message, message);
}

/** Builds `{ a: { b: { c: value } } }` from the path "a.b.c". */
function at(path: string, value: unknown): unknown {
  return path.split('.').reduceRight<unknown>((inner, name) => ({ [name]: inner }), value);
}

function isDeeplyFrozen(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return true;
  return Object.isFrozen(value) && Object.values(value).every(isDeeplyFrozen);
}

describe('DEFAULT_CONFIG', () => {
  it('should hold exactly the defaults CONVENTIONS.md#configuration-file lists', () => {
    assert.deepEqual(DEFAULT_CONFIG, {
      allowUnconditionalPut: false,
      tombstoneDays: 30,
      maxBodyBytes: 1048576,
      pageSize: { default: 50, max: 1000 },
      collections: {},
      webhooks: {
        path: '/webhooks',
        toleranceS: 300,
        requireTimestamp: false,
        dedupDays: 30,
        workers: 4,
        handlerTimeoutMs: 30000,
        retry: { baseMs: 1000, factor: 2, capMs: 300000, attempts: 8 },
      },
      outbox: {
        workers: 4,
        inFlight: 16,
        timeoutMs: 5000,
        retry: { baseMs: 1000, factor: 3, capMs: 21600000, attempts: 15 },
        refusePrivateAddresses: false,
        errorDetail: 'full',
        disableAfterS: 432000,
      },
      cors: {},
      allowedHosts: [],
      limits: {
        maxPropertyNames: { collection: 10000, document: 1000 },
        maxSubscriptions: 100,
        maxQueuedResponseBytes: 268435456,
        responseStallMs: 30000,
        pageBytes: 4194304,
        expensiveFilters: 2,
      },
    });
  });

  it('should be deeply frozen', () => {
    assert.equal(isDeeplyFrozen(DEFAULT_CONFIG), true);
    assert.equal(Object.isFrozen(DEFAULT_CONFIG.webhooks.retry), true);
    assert.equal(Object.isFrozen(DEFAULT_CONFIG.collections), true);
  });
});

describe('parseConfig', () => {
  describe('merging', () => {
    it('should answer the defaults for no options or an empty object', () => {
      assert.deepEqual(accepted(undefined), DEFAULT_CONFIG);
      assert.deepEqual(accepted({}), DEFAULT_CONFIG);
    });

    it('should build fresh, deeply frozen objects that share nothing with DEFAULT_CONFIG', () => {
      const config = accepted({});
      assert.notEqual(config, DEFAULT_CONFIG);
      assert.notEqual(config.webhooks, DEFAULT_CONFIG.webhooks);
      assert.notEqual(config.webhooks.retry, DEFAULT_CONFIG.webhooks.retry);
      assert.notEqual(config.outbox.retry, DEFAULT_CONFIG.outbox.retry);
      assert.notEqual(config.pageSize, DEFAULT_CONFIG.pageSize);
      assert.notEqual(config.collections, DEFAULT_CONFIG.collections);
      assert.equal(isDeeplyFrozen(config), true);
    });

    it('should merge nested keys over the defaults, keeping their siblings', () => {
      const config = accepted({ webhooks: { retry: { attempts: 3 } }, outbox: { timeoutMs: 10 }, tombstoneDays: 1 });
      assert.deepEqual(config.webhooks, { ...DEFAULT_CONFIG.webhooks, retry: { ...DEFAULT_CONFIG.webhooks.retry, attempts: 3 } });
      assert.deepEqual(config.outbox, { ...DEFAULT_CONFIG.outbox, timeoutMs: 10 });
      assert.equal(config.tombstoneDays, 1);
      assert.equal(config.maxBodyBytes, DEFAULT_CONFIG.maxBodyBytes);
    });

    it('should accept a full configuration file', () => {
      const input = {
        allowUnconditionalPut: true,
        tombstoneDays: 0.5,
        maxBodyBytes: 2048,
        pageSize: { default: 10, max: 100 },
        collections: {
          products: { cacheControl: 'public, max-age=86400', schema: { id: 'string', price: 'number', tags: 'array' }, summary: ['price'] },
          orders: {},
        },
        webhooks: { path: '/hooks/in', toleranceS: 60, requireTimestamp: true, dedupDays: 7, workers: 2, handlerTimeoutMs: 50, retry: { baseMs: 0, factor: 1, capMs: 0, attempts: 1 } },
        outbox: { workers: 1, inFlight: 2, timeoutMs: 100, retry: { baseMs: 1, factor: 1.5, capMs: 10, attempts: 2 }, refusePrivateAddresses: true, errorDetail: 'class', disableAfterS: 3600 },
        cors: { origins: ['http://localhost:5173'] },
        allowedHosts: ['myapp.test', '192.168.1.20', '[fd00::1]'],
        limits: {
          maxPropertyNames: { collection: 50, document: 5 },
          maxSubscriptions: 3,
          maxQueuedResponseBytes: 1048576,
          responseStallMs: 100,
          pageBytes: 2048,
          expensiveFilters: 1,
        },
      };
      assert.deepEqual(accepted(JSON.parse(JSON.stringify(input))), input);
    });

    it('should treat an undefined value like an absent key (start() options)', () => {
      assert.deepEqual(accepted({ tombstoneDays: undefined, webhooks: undefined }), DEFAULT_CONFIG);
    });

    it('should not mutate its input', () => {
      const input = { pageSize: { max: 20 }, collections: { products: { schema: { price: 'number' } } } };
      const copy = structuredClone(input);
      accepted(input);
      assert.deepEqual(input, copy);
    });
  });

  describe('hardening keys', () => {
    it('should refuse a host that is not a bare host name, naming its index', () => {
      for (const host of ['http://myapp.test', 'myapp.test:8080', 'my_app.test', '', 'a/b']) {
        const result = parseConfig({ allowedHosts: [host] });
        assert.equal(result.ok, false, host);
        if (!result.ok) assert.equal(result.key, 'allowedHosts[0]');
      }
    });

    it('should refuse an errorDetail other than "full" or "class", and limits out of range', () => {
      const detail = parseConfig({ outbox: { errorDetail: 'none' } });
      assert.ok(!detail.ok && detail.key === 'outbox.errorDetail');
      const limit = parseConfig({ limits: { maxPropertyNames: { document: 0 } } });
      assert.ok(!limit.ok && limit.key === 'limits.maxPropertyNames.document');
      const unknown = parseConfig({ limits: { maxPages: 3 } });
      assert.ok(!unknown.ok && unknown.key === 'limits.maxPages');
    });

    it('should read webhooks.sources, defaulting to one resapi source at webhooks.path (CONVENTIONS.md#receiving-sources)', () => {
      assert.deepEqual(webhookSources(accepted({ webhooks: { path: '/in' } })), [
        { path: '/in', scheme: 'resapi', secretsEnv: 'RESAPI_WEBHOOK_SECRETS' },
      ]);
      const sources = [
        { path: '/webhooks', scheme: 'resapi', secretsEnv: 'RESAPI_WEBHOOK_SECRETS' },
        { path: '/webhooks/stripe', scheme: 'stripe', secretsEnv: 'STRIPE_SECRETS' },
      ];
      assert.deepEqual(webhookSources(accepted({ webhooks: { sources } })), sources);
      refused({ webhooks: { sources, path: '/in' } }, 'webhooks.path', /must not be given with webhooks.sources/);
      refused({ webhooks: { sources: [] } }, 'webhooks.sources', /1-16 sources/);
      refused({ webhooks: { sources: [{ ...sources[1], path: '/hooks/stripe' }] } }, 'webhooks.sources[0].path', /"\/webhooks\/<name>"/);
      refused({ webhooks: { sources: [sources[1], sources[1]] } }, 'webhooks.sources[1].path', /repeats/);
      // "webhooks" is the default source's name in /$inbox: a named source may not take it.
      refused({ webhooks: { sources: [{ ...sources[1], path: '/webhooks/webhooks' }] } }, 'webhooks.sources[0].path', /name of the source at \/webhooks/);
      refused({ webhooks: { sources: [{ ...sources[1], scheme: 'svix' }] } }, 'webhooks.sources[0].scheme', /one of resapi, standard, github, stripe/);
      refused({ webhooks: { sources: [{ ...sources[1], secretsEnv: 'whsec_abc=' }] } }, 'webhooks.sources[0].secretsEnv', /environment variable/);
      refused({ webhooks: { sources: [{ ...sources[1], secret: 'x' }] } }, 'webhooks.sources[0].secret', /known keys: path, scheme, secretsEnv/);
    });

    it('should read webhooks.forward as a plain http(s) URL and outbox.disableAfterS as seconds', () => {
      assert.equal(accepted({ webhooks: { forward: 'http://127.0.0.1:3000/hooks' } }).webhooks.forward, 'http://127.0.0.1:3000/hooks');
      refused({ webhooks: { forward: 'ftp://127.0.0.1/' } }, 'webhooks.forward', /absolute http or https URL/);
      refused({ webhooks: { forward: 'http://user:pw@127.0.0.1/' } }, 'webhooks.forward', /without credentials/);
      refused({ outbox: { disableAfterS: 10 } }, 'outbox.disableAfterS', /from 60 to 31536000/);
    });
  });

  describe('unknown keys and prototype pollution', () => {
    it('should refuse an unknown key at every level, naming its dotted path', () => {
      refused({ port: 3000 }, 'port', /is not a known key/);
      refused({ pageSize: { min: 1 } }, 'pageSize.min', /known keys: default, max/);
      refused({ webhooks: { secret: 'x' } }, 'webhooks.secret', /is not a known key/);
      refused({ webhooks: { retry: { jitter: true } } }, 'webhooks.retry.jitter', /is not a known key/);
      refused({ outbox: { retry: { max: 1 } } }, 'outbox.retry.max', /is not a known key/);
      refused({ collections: { products: { ttl: 5 } } }, 'collections.products.ttl', /is not a known key/);
    });

    it('should refuse "__proto__" as unknown and leave Object.prototype alone', () => {
      refused(JSON.parse('{"__proto__": {"polluted": true}}'), '__proto__', /is not a known key/);
      refused(JSON.parse('{"webhooks": {"__proto__": {"polluted": true}}}'), 'webhooks.__proto__', /is not a known key/);
      refused(JSON.parse('{"collections": {"__proto__": {}}}'), 'collections.__proto__');
      refused(JSON.parse('{"collections": {"p": {"schema": {"__proto__": "string"}}}}'), 'collections.p.schema.__proto__', /is not a known key/);
      assert.equal(Object.hasOwn(Object.prototype, 'polluted'), false);
    });

    it('should refuse keys of Object.prototype such as "constructor"', () => {
      refused({ constructor: {} }, 'constructor', /is not a known key/);
      refused({ webhooks: { toString: 'x' } }, 'webhooks.toString', /is not a known key/);
    });

    it('should quote an odd key so the path stays readable and log-safe', () => {
      refused({ 'a.b\n': 1 }, '"a.b\\n"', /is not a known key/);
    });
  });

  describe('types', () => {
    it('should refuse a configuration that is not a plain object, with an empty key', () => {
      for (const input of [null, [], 'x', 1, new Date(0), Object.create({ tombstoneDays: 1 })]) {
        const result = parseConfig(input);
        assert.deepEqual(result.ok ? undefined : result.key, '', `for ${String(input)}`);
        assert.match(result.ok ? '' : result.message, /must be a JSON object/);
      }
    });

    for (const path of ['pageSize', 'collections', 'webhooks', 'webhooks.retry', 'outbox', 'outbox.retry', 'collections.products', 'collections.products.schema']) {
      it(`should refuse ${path} when it is not an object`, () => {
        refused(at(path, []), path, /must be an object, got an array/);
        refused(at(path, null), path, /must be an object, got null/);
        refused(at(path, 'x'), path, /must be an object, got "x"/);
      });
    }

    for (const path of ['allowUnconditionalPut', 'webhooks.requireTimestamp']) {
      it(`should refuse ${path} when it is not a boolean`, () => {
        refused(at(path, 'true'), path, /must be true or false, got "true"/);
        refused(at(path, 0), path, /must be true or false, got 0/);
        assert.equal(parseConfig(at(path, true)).ok, true);
      });
    }
  });

  describe('numbers', () => {
    const integers: readonly (readonly [string, number, number])[] = [
      ['maxBodyBytes', 1, 1073741824],
      ['pageSize.max', 1, 1000],
      ['webhooks.toleranceS', 1, 86400],
      ['webhooks.workers', 1, 256],
      ['webhooks.retry.attempts', 1, 1000],
      ['outbox.workers', 1, 256],
      ['outbox.inFlight', 1, 64],
      ['outbox.timeoutMs', 1, 2147483647],
      ['outbox.retry.attempts', 1, 1000],
    ];
    for (const [path, min, max] of integers) {
      it(`should hold ${path} to an integer from ${min} to ${max}`, () => {
        assert.equal(parseConfig(at(path, min)).ok, true);
        assert.equal(parseConfig(at(path, max)).ok, true);
        refused(at(path, min - 1), path, new RegExp(`must be an integer from ${min} to ${max}`));
        refused(at(path, max + 1), path);
        refused(at(path, min + 0.5), path);
        refused(at(path, String(min)), path, /got "\d+"/);
        refused(at(path, Number.NaN), path, /got NaN/);
        refused(at(path, Number.POSITIVE_INFINITY), path);
      });
    }

    it('should hold pageSize.default to an integer from 1 to 1000', () => {
      assert.equal(parseConfig({ pageSize: { default: 1 } }).ok, true);
      refused({ pageSize: { default: 0 } }, 'pageSize.default', /from 1 to 1000/);
      refused({ pageSize: { default: 2.5 } }, 'pageSize.default');
    });

    for (const path of ['webhooks.retry', 'outbox.retry']) {
      it(`should hold ${path}.baseMs and ${path}.capMs to integers from 0 to 2147483647`, () => {
        assert.equal(parseConfig(at(path, { baseMs: 0, capMs: 0 })).ok, true);
        assert.equal(parseConfig(at(path, { capMs: 2147483647 })).ok, true);
        refused(at(`${path}.baseMs`, -1), `${path}.baseMs`, /integer from 0 to 2147483647/);
        refused(at(`${path}.baseMs`, 1.5), `${path}.baseMs`);
        refused(at(`${path}.capMs`, 2147483648), `${path}.capMs`, /integer from 0 to 2147483647/);
      });

      it(`should hold ${path}.factor to a finite number from 1 to 100`, () => {
        assert.equal(parseConfig(at(`${path}.factor`, 1.5)).ok, true);
        assert.equal(parseConfig(at(`${path}.factor`, 100)).ok, true);
        refused(at(`${path}.factor`, 0.5), `${path}.factor`, /finite number from 1 to 100, got 0.5/);
        refused(at(`${path}.factor`, Number.POSITIVE_INFINITY), `${path}.factor`);
        refused(at(`${path}.factor`, '2'), `${path}.factor`);
      });

      it(`should refuse ${path}.capMs below baseMs, naming the key the input set`, () => {
        refused(at(path, { capMs: 500 }), `${path}.capMs`, new RegExp(`must not be less than ${path.replace('.', '\\.')}\\.baseMs \\(1000\\), got 500`));
        refused(at(path, { baseMs: 400000000 }), `${path}.baseMs`, /must not exceed .*capMs/);
        refused(at(path, { baseMs: 10, capMs: 5 }), `${path}.capMs`);
      });
    }

    it('should hold tombstoneDays to a finite number from 0 to 36500', () => {
      assert.equal(accepted({ tombstoneDays: 0 }).tombstoneDays, 0);
      assert.equal(accepted({ tombstoneDays: 0.25 }).tombstoneDays, 0.25);
      assert.equal(parseConfig({ tombstoneDays: 36500 }).ok, true);
      refused({ tombstoneDays: -1 }, 'tombstoneDays', /finite number from 0 to 36500, got -1/);
      refused({ tombstoneDays: 36501 }, 'tombstoneDays');
      refused({ tombstoneDays: Number.NaN }, 'tombstoneDays');
      refused({ tombstoneDays: '30' }, 'tombstoneDays');
    });

    it('should hold webhooks.dedupDays to a finite number above 0 and at most 36500', () => {
      assert.equal(accepted({ webhooks: { dedupDays: 0.5 } }).webhooks.dedupDays, 0.5);
      refused({ webhooks: { dedupDays: 0 } }, 'webhooks.dedupDays', /above 0 and at most 36500, got 0/);
      refused({ webhooks: { dedupDays: 36500.5 } }, 'webhooks.dedupDays');
      refused({ webhooks: { dedupDays: Number.POSITIVE_INFINITY } }, 'webhooks.dedupDays');
    });

    it('should keep pageSize.default at most pageSize.max', () => {
      assert.deepEqual(accepted({ pageSize: { default: 100, max: 100 } }).pageSize, { default: 100, max: 100 });
      refused({ pageSize: { default: 200, max: 100 } }, 'pageSize.default', /must not exceed pageSize\.max \(100\), got 200/);
      refused({ pageSize: { default: 1000, max: 999 } }, 'pageSize.default');
    });

    it('should lower the default page size to a smaller max when no default is given', () => {
      assert.deepEqual(accepted({ pageSize: { max: 20 } }).pageSize, { default: 20, max: 20 });
      assert.deepEqual(accepted({ pageSize: { max: 60 } }).pageSize, { default: 50, max: 60 });
    });
  });

  describe('collections', () => {
    it('should accept the names CONVENTIONS.md#names allows', () => {
      const name = `A${'b'.repeat(63)}`;
      assert.deepEqual(Object.keys(accepted({ collections: { p: {}, 'my_col-2': {}, [name]: {} } }).collections), ['p', 'my_col-2', name]);
    });

    for (const name of ['', '1abc', '_abc', '-abc', 'a.b', 'a b', 'a/b', '$bulk', 'é', `a${'b'.repeat(64)}`]) {
      it(`should refuse the collection name ${JSON.stringify(name)}`, () => {
        const result = parseConfig({ collections: { [name]: {} } });
        assert.equal(result.ok, false);
        assert.match(result.ok ? '' : result.key, /^collections\./);
        assert.match(result.ok ? '' : result.message, /is not a valid collection name/);
      });
    }

    it('should accept a cacheControl of visible ASCII with inner spaces', () => {
      const config = accepted({ collections: { ref: { cacheControl: 'public, max-age=86400, stale-while-revalidate="60"' } } });
      assert.equal(config.collections.ref?.cacheControl, 'public, max-age=86400, stale-while-revalidate="60"');
    });

    for (const value of ['', ' public', 'public ', 'public\r\nSet-Cookie: a=b', 'max-age=0\n', 'no-store\u0000', 'a\tb', 'caf\u00e9', 'x'.repeat(1025), 5, null, ['no-store']]) {
      it(`should refuse the cacheControl ${JSON.stringify(value).slice(0, 40)}`, () => {
        refused({ collections: { products: { cacheControl: value } } }, 'collections.products.cacheControl', /visible ASCII/);
      });
    }

    it('should accept the five field types', () => {
      const schema = { s: 'string', n: 'number', b: 'boolean', o: 'object', a: 'array' };
      assert.deepEqual(accepted({ collections: { p: { schema } } }).collections.p?.schema, schema);
    });

    for (const type of ['integer', 'String', '', 5, null, ['string']]) {
      it(`should refuse the field type ${JSON.stringify(type)}`, () => {
        refused({ collections: { products: { schema: { price: type } } } }, 'collections.products.schema.price', /must be one of string, number, boolean, object, array/);
      });
    }

    for (const name of ['', '1a', 'a-b', 'a/b', 'a.b', 'é', `a${'b'.repeat(128)}`]) {
      it(`should refuse the schema field name ${JSON.stringify(name).slice(0, 20)}`, () => {
        const result = parseConfig({ collections: { products: { schema: { [name]: 'string' } } } });
        assert.match(result.ok ? '' : result.key, /^collections\.products\.schema\./);
        assert.match(result.ok ? '' : result.message, /is not a valid field name/);
      });
    }

    it('should allow "id" in a schema only as a string', () => {
      assert.equal(parseConfig({ collections: { p: { schema: { id: 'string' } } } }).ok, true);
      refused({ collections: { p: { schema: { id: 'number' } } } }, 'collections.p.schema.id', /must be "string"/);
    });

    it('should leave cacheControl and schema out when they are not given', () => {
      assert.deepEqual(accepted({ collections: { p: {} } }).collections, { p: {} });
      assert.equal(Object.hasOwn(accepted({ collections: { p: {} } }).collections.p ?? {}, 'schema'), false);
    });
  });

  describe('webhooks.path', () => {
    for (const path of ['/webhooks', '/hooks/github', '/a~b/c.d_e-f', '/%7Ehooks', '/@x:y']) {
      it(`should accept ${path}`, () => {
        assert.equal(accepted({ webhooks: { path } }).webhooks.path, path);
      });
    }

    for (const path of ['webhooks', '', '/', '//x', '/x/', '/x?y=1', '/x#y', '/a b', '/%zz', '/\u00e9', 5, null]) {
      it(`should refuse ${JSON.stringify(path)}`, () => {
        refused({ webhooks: { path } }, 'webhooks.path', /must be a path starting with "\/"/);
      });
    }
  });

  describe('collections.<name>.summary', () => {
    it('should accept field paths as $select writes them', () => {
      assert.deepEqual(accepted({ collections: { p: { summary: ['name', 'dims/width'] } } }).collections.p?.summary, ['name', 'dims/width']);
    });

    it('should refuse an empty list, a repeat, a bad path, and a field the schema does not declare', () => {
      refused({ collections: { p: { summary: [] } } }, 'collections.p.summary', /array of 1-64 strings/);
      refused({ collections: { p: { summary: ['a', 'a'] } } }, 'collections.p.summary[1]', /repeats/);
      refused({ collections: { p: { summary: ['a b'] } } }, 'collections.p.summary[0]', /field path/);
      refused({ collections: { p: { summary: ['a//b'] } } }, 'collections.p.summary[0]', /field path/);
      refused({ collections: { p: { schema: { name: 'string' }, summary: ['name', 'price'] } } }, 'collections.p.summary', /"price", which the collection's schema does not declare/);
    });
  });

  describe('cors.origins', () => {
    it('should accept "*" and origins as browsers send them', () => {
      assert.deepEqual(accepted({ cors: { origins: ['http://localhost:5173', 'https://app.example.org'] } }).cors.origins, ['http://localhost:5173', 'https://app.example.org']);
      assert.deepEqual(accepted({ cors: { origins: ['*'] } }).cors.origins, ['*']);
    });

    it('should refuse anything a browser never sends as Origin', () => {
      for (const origin of ['http://localhost:5173/', 'localhost', 'HTTPS://x.org', 'http://x.org/app']) refused({ cors: { origins: [origin] } }, 'cors.origins[0]', /origin as browsers send it/);
      refused({ cors: { origins: 'http://x.org' } }, 'cors.origins', /array of 1-64 strings/);
    });
  });
});
