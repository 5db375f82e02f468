// The CORS policy (lib/http/cors.ts; `cors.origins`, CONVENTIONS.md#cors): who may read responses,
// and the default that depends on whether API keys are on.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { corsPolicy, isSerializedOrigin } from '../../lib/http/cors.js';

describe('corsPolicy', () => {
  it('should allow any origin by default while API keys are off, answering "*" without Vary: Origin', () => {
    const result = corsPolicy(undefined, false);
    assert.ok(result.ok);
    assert.equal(result.policy.allowOrigin('http://127.0.0.1:5173'), '*');
    assert.equal(result.policy.variesByOrigin, false);
  });

  it('should allow no origin by default while API keys are on', () => {
    const result = corsPolicy(undefined, true);
    assert.ok(result.ok);
    assert.equal(result.policy.enabled, false);
    assert.equal(result.policy.allowOrigin('http://127.0.0.1:5173'), undefined);
  });

  it('should name only a listed origin, and vary by Origin', () => {
    const result = corsPolicy(['http://localhost:5173'], true);
    assert.ok(result.ok);
    assert.equal(result.policy.allowOrigin('http://localhost:5173'), 'http://localhost:5173');
    assert.equal(result.policy.allowOrigin('http://localhost:5174'), undefined);
    assert.equal(result.policy.allowOrigin(undefined), undefined);
    assert.equal(result.policy.variesByOrigin, true);
  });

  it('should refuse "*" while API keys are on (CONVENTIONS.md#cors: never "*")', () => {
    const result = corsPolicy(['*'], true);
    assert.equal(result.ok, false);
    assert.match(result.ok ? '' : result.message, /not "\*"/);
  });
});

describe('isSerializedOrigin', () => {
  it('should take origins as browsers send them and nothing else', () => {
    for (const origin of ['http://localhost:5173', 'https://example.org', 'http://127.0.0.1:8080', 'http://[::1]:3000']) assert.ok(isSerializedOrigin(origin), origin);
    for (const origin of ['http://localhost:5173/', 'HTTP://localhost', 'https://Example.org', 'ftp://x', 'http://x/path', 'null', '']) assert.ok(!isSerializedOrigin(origin), origin);
  });
});
