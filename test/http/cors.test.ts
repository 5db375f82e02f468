// The CORS policy (lib/http/cors.ts; `cors.origins`, CONVENTIONS.md#cors): who may read responses,
// the default that depends on whether API keys are on (loopback origins without keys), which writes
// from pages are refused, and Private Network Access preflights.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { corsPolicy, isSerializedOrigin } from '../../lib/http/cors.js';

describe('corsPolicy', () => {
  it('should allow loopback origins only by default while API keys are off, naming the origin', () => {
    const result = corsPolicy(undefined, false);
    assert.ok(result.ok);
    for (const origin of ['http://127.0.0.1:5173', 'http://localhost:3000', 'https://localhost', 'http://app.localhost:8080', 'http://[::1]:4200']) {
      assert.equal(result.policy.allowOrigin(origin), origin, origin);
    }
    for (const origin of ['https://example.org', 'http://localhost.example.org', 'http://127.0.0.1.nip.io', 'http://127.0.0.2:80', 'http://[::2]', 'null', 'file://']) {
      assert.equal(result.policy.allowOrigin(origin), undefined, origin);
    }
  });

  it('should vary by Origin under the loopback default only when the request carries one', () => {
    const result = corsPolicy(undefined, false);
    assert.ok(result.ok);
    assert.equal(result.policy.variesByOrigin('https://example.org'), true);
    assert.equal(result.policy.variesByOrigin(undefined), false);
  });

  it('should allow no origin by default while API keys are on', () => {
    const result = corsPolicy(undefined, true);
    assert.ok(result.ok);
    assert.equal(result.policy.enabled, false);
    assert.equal(result.policy.allowOrigin('http://127.0.0.1:5173'), undefined);
  });

  it('should name only a listed origin, and vary by Origin on every response', () => {
    const result = corsPolicy(['http://localhost:5173'], true);
    assert.ok(result.ok);
    assert.equal(result.policy.allowOrigin('http://localhost:5173'), 'http://localhost:5173');
    assert.equal(result.policy.allowOrigin('http://localhost:5174'), undefined);
    assert.equal(result.policy.allowOrigin(undefined), undefined);
    assert.equal(result.policy.variesByOrigin(undefined), true);
  });

  it('should answer "*" without Vary: Origin when "*" is configured with API keys off', () => {
    const result = corsPolicy(['*'], false);
    assert.ok(result.ok);
    assert.equal(result.policy.allowOrigin('https://example.org'), '*');
    assert.equal(result.policy.variesByOrigin('https://example.org'), false);
    assert.equal(result.policy.refuses('PUT', 'null'), false, 'every origin, the opaque one too');
  });

  it('should refuse "*" while API keys are on (CONVENTIONS.md#cors: never "*")', () => {
    const result = corsPolicy(['*'], true);
    assert.equal(result.ok, false);
    assert.match(result.ok ? '' : result.message, /not "\*"/);
  });
});

describe('CorsPolicy.refuses', () => {
  const result = corsPolicy(undefined, false);
  assert.ok(result.ok);
  const policy = result.policy;

  it('should refuse an unsafe method from an origin not allowed, "null" included', () => {
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      assert.equal(policy.refuses(method, 'https://example.org'), true, method);
      assert.equal(policy.refuses(method, 'null'), true, method);
    }
  });

  it('should let safe methods, allowed origins and requests without Origin through', () => {
    for (const method of ['GET', 'HEAD', 'OPTIONS']) assert.equal(policy.refuses(method, 'https://example.org'), false, method);
    assert.equal(policy.refuses('PUT', 'http://localhost:5173'), false);
    assert.equal(policy.refuses('PUT', undefined), false, 'a request without Origin comes from no page');
  });
});

describe('CorsPolicy.allowsPrivateNetwork', () => {
  it('should allow a Private Network Access preflight from an allowed origin that asks for it, only', () => {
    const result = corsPolicy(undefined, false);
    assert.ok(result.ok);
    assert.equal(result.policy.allowsPrivateNetwork('http://localhost:5173', 'true'), true);
    assert.equal(result.policy.allowsPrivateNetwork('http://localhost:5173', undefined), false);
    assert.equal(result.policy.allowsPrivateNetwork('https://example.org', 'true'), false);
  });
});

describe('isSerializedOrigin', () => {
  it('should take origins as browsers send them and nothing else', () => {
    for (const origin of ['http://localhost:5173', 'https://example.org', 'http://127.0.0.1:8080', 'http://[::1]:3000']) assert.ok(isSerializedOrigin(origin), origin);
    for (const origin of ['http://localhost:5173/', 'HTTP://localhost', 'https://Example.org', 'ftp://x', 'http://x/path', 'null', '']) assert.ok(!isSerializedOrigin(origin), origin);
  });
});
