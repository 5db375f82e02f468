// The authenticated `$skiptoken` (lib/query/token.ts; CONVENTIONS.md#skip-tokens: a tampered token,
// or one from another collection or server, → 400). The token format is the one documented in the
// module header: base64url(JSON payload) "." base64url(first 16 bytes of HMAC-SHA256).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { longestToken, signToken, verifyToken, type PagePosition } from '../../lib/query/token.js';

const KEY = Buffer.from('0123456789abcdef0123456789abcdef', 'utf8');
const OTHER_KEY = Buffer.from('fedcba9876543210fedcba9876543210', 'utf8');

const POSITION: PagePosition = {
  scope: 'products',
  query: {
    filter: "name eq 'caf\u00e9 +1'",
    conditions: [{ path: ['origin', 'country'], value: 'DE' }],
    orderby: [{ path: ['price'], descending: true }],
    select: [['name'], ['origin', 'country']],
    top: 120,
    count: true,
  },
  pageSize: 7,
  after: [12.5, { structured: '[null,true]' }, 'p-00042'],
  returned: 14,
};

/** A token whose MAC is valid for any payload text: reaches the checks after the MAC. */
function signedPayload(key: Buffer, payloadText: string): string {
  const payload = Buffer.from(payloadText, 'utf8').toString('base64url');
  const mac = createHmac('sha256', key).update(payload).digest().subarray(0, 16);
  return `${payload}.${mac.toString('base64url')}`;
}

function split(token: string): { payload: Buffer; mac: Buffer } {
  const [payload, mac] = token.split('.') as [string, string];
  return { payload: Buffer.from(payload, 'base64url'), mac: Buffer.from(mac, 'base64url') };
}

function join(payload: Buffer, mac: Buffer): string {
  return `${payload.toString('base64url')}.${mac.toString('base64url')}`;
}

describe('signToken / verifyToken', () => {
  it('should round-trip a position', () => {
    const token = signToken(KEY, POSITION);
    assert.deepEqual(verifyToken(KEY, token, 'products'), POSITION);
  });

  it('should round-trip a query-resource scope, which carries the definition version instead of the query', () => {
    const position: PagePosition = { scope: 'products/$queries/cheap', definition: 42, pageSize: 1, after: ['a'], returned: 1 };
    assert.deepEqual(verifyToken(KEY, signToken(KEY, position), 'products/$queries/cheap'), position);
  });

  it('should bound the longest token of a walk, and grow that bound with each $orderby key', () => {
    const start = { scope: 'products', query: POSITION.query, pageSize: 7 };
    const oneKey = longestToken(KEY, start, 1);
    const twoKeys = longestToken(KEY, start, 2);
    assert.ok(twoKeys > oneKey);
    // Any real position of a one-key walk fits within the bound.
    const real = signToken(KEY, { ...start, after: ['\u0000'.repeat(128), 'x'.repeat(128)], returned: 10 ** 9 });
    assert.ok(real.length <= oneKey, `${real.length} > ${oneKey}`);
  });

  it('should produce a token that is safe in a query string without encoding', () => {
    assert.match(signToken(KEY, POSITION), /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
  });

  it('should refuse a token for another scope', () => {
    const token = signToken(KEY, POSITION);
    assert.equal(verifyToken(KEY, token, 'orders'), undefined);
    assert.equal(verifyToken(KEY, token, 'Products'), undefined);
    assert.equal(verifyToken(KEY, token, 'products/$queries/cheap'), undefined);
    assert.equal(verifyToken(KEY, token, ''), undefined);
  });

  it('should refuse a token signed with another key', () => {
    assert.equal(verifyToken(OTHER_KEY, signToken(KEY, POSITION), 'products'), undefined);
    assert.equal(verifyToken(KEY, signToken(randomBytes(32), POSITION), 'products'), undefined);
  });

  it('should refuse every single flipped bit in the payload bytes', () => {
    const { payload, mac } = split(signToken(KEY, POSITION));
    for (let bit = 0; bit < payload.length * 8; bit++) {
      const flipped = Buffer.from(payload);
      flipped[bit >> 3] = (flipped[bit >> 3] as number) ^ (1 << (bit & 7));
      assert.equal(verifyToken(KEY, join(flipped, mac), 'products'), undefined, `payload bit ${bit}`);
    }
  });

  it('should refuse every single flipped bit in the MAC bytes', () => {
    const { payload, mac } = split(signToken(KEY, POSITION));
    assert.equal(mac.length, 16);
    for (let bit = 0; bit < mac.length * 8; bit++) {
      const flipped = Buffer.from(mac);
      flipped[bit >> 3] = (flipped[bit >> 3] as number) ^ (1 << (bit & 7));
      assert.equal(verifyToken(KEY, join(payload, flipped), 'products'), undefined, `MAC bit ${bit}`);
    }
  });

  it('should refuse a token whose payload text was edited to a different position', () => {
    const token = signToken(KEY, POSITION);
    const { mac } = split(token);
    const edited = Buffer.from(JSON.stringify({ ...POSITION, returned: 0 }), 'utf8');
    assert.equal(verifyToken(KEY, join(edited, mac), 'products'), undefined);
  });

  it('should refuse a truncated or extended MAC', () => {
    const token = signToken(KEY, POSITION);
    assert.equal(verifyToken(KEY, token.slice(0, -1), 'products'), undefined);
    assert.equal(verifyToken(KEY, token.slice(0, -4), 'products'), undefined);
    assert.equal(verifyToken(KEY, `${token}AAAA`, 'products'), undefined);
  });

  // A tampered token → 400 (CONVENTIONS.md#skip-tokens). The MAC text is decoded leniently, so these
  // altered strings would still be accepted if verifyToken did not insist on the exact text.
  it('should refuse any change to the text of the MAC, not only changes to its bytes', () => {
    const token = signToken(KEY, POSITION);
    const dot = token.indexOf('.');
    const macText = token.slice(dot + 1);
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const last = macText.at(-1) as string;
    const variants = [
      ...[...alphabet].filter((c) => c !== last).map((c) => `${token.slice(0, -1)}${c}`),
      `${token.slice(0, dot + 3)}!${token.slice(dot + 3)}`,
      `${token.slice(0, dot + 3)}.${token.slice(dot + 3)}`,
      `${token}=`,
      `${token}==`,
    ];
    const accepted = variants.filter((variant) => verifyToken(KEY, variant, 'products') !== undefined).map((variant) => variant.slice(dot + 1));
    assert.deepEqual(accepted, [], `issued MAC text ${macText}; these altered texts were accepted`);
  });

  it('should refuse a correctly signed payload that is not JSON', () => {
    assert.equal(verifyToken(KEY, signedPayload(KEY, '{not json'), 'products'), undefined);
    assert.equal(verifyToken(KEY, signedPayload(KEY, ''), 'products'), undefined);
  });

  it('should refuse a correctly signed payload that is not a position', () => {
    const good = { v: 2, ...POSITION } as Record<string, unknown>;
    assert.deepEqual(verifyToken(KEY, signedPayload(KEY, JSON.stringify(good)), 'products'), POSITION, 'the well-formed payload is accepted');
    const shapes: unknown[] = [
      { ...POSITION },
      { ...good, v: 1 },
      { ...good, after: [[1]] },
      { ...good, definition: '3' },
      null,
      [],
      'products',
      42,
      { ...good, scope: 7 },
      { ...good, query: null },
      { ...good, query: 'x' },
      { ...good, pageSize: '7' },
      { ...good, after: 'p1' },
      { ...good, returned: null },
      { scope: 'products' },
    ];
    for (const shape of shapes) {
      assert.equal(verifyToken(KEY, signedPayload(KEY, JSON.stringify(shape)), 'products'), undefined, JSON.stringify(shape));
    }
  });

  it('should return undefined, never throw, for garbage strings', () => {
    const garbage = [
      '',
      '.',
      '..',
      'a.',
      '.a',
      'abc',
      'a.b.c',
      '%%%.%%%',
      '\u0000.\u0000',
      '\uD800.\uDFFF',
      '\u{1F600}.\u{1F600}',
      ' . ',
      'x'.repeat(100_000),
      `${'A'.repeat(50_000)}.${'A'.repeat(50_000)}`,
      `${'A'.repeat(30)}.${'A'.repeat(22)}`,
      'e30.AAAAAAAAAAAAAAAAAAAAAA',
    ];
    for (const token of garbage) {
      assert.equal(verifyToken(KEY, token, 'products'), undefined, JSON.stringify(token.slice(0, 40)));
    }
  });

  it('should return undefined for random strings over the token alphabet', () => {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.=+/ ';
    const bytes = randomBytes(20_000);
    for (let start = 0; start + 100 <= bytes.length; start += 100) {
      let token = '';
      for (let i = start; i < start + 100; i++) token += alphabet[(bytes[i] as number) % alphabet.length];
      assert.equal(verifyToken(KEY, token, 'products'), undefined, token);
    }
  });
});
