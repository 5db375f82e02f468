// Tests for lib/http/field-lines.ts: the field lines of one header read from a request's raw lines,
// names compared case-insensitively (RFC 9110 §5.1), repeated lines kept apart (RFC 9110 §5.3).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { fieldLine, fieldLines, fieldValue, REPEATED } from '../../lib/http/field-lines.js';

function request(rawHeaders: string[]): IncomingMessage {
  return { rawHeaders } as unknown as IncomingMessage;
}

describe('fieldLine', () => {
  it('should find a name sent in any case, and only that name', () => {
    for (const name of ['host', 'Host', 'HOST', 'hOsT']) assert.equal(fieldLine(request([name, 'a']), 'host'), 'a');
    assert.equal(fieldLine(request(['Hosts', 'a', 'Hos', 'b', 'Origin', 'c']), 'host'), undefined);
    // The same length, a "-" where the name asked for has a letter.
    assert.equal(fieldLine(request(['If-None-Match', 'x']), 'if-nonemmatch'), undefined);
    assert.equal(fieldLine(request(['X-Request-Id', 'r']), 'x-request-id'), 'r');
  });

  it('should say REPEATED for a field sent on two lines, and give an empty value as sent', () => {
    assert.equal(fieldLine(request(['Host', 'a', 'host', 'b']), 'host'), REPEATED);
    assert.equal(fieldLine(request(['Host', '']), 'host'), '');
  });
});

describe('fieldLines and fieldValue', () => {
  it('should keep every line in order, and join them with ", " as one value', () => {
    const req = request(['Accept', 'text/csv', 'Other', 'x', 'ACCEPT', 'text/html']);
    assert.deepEqual(fieldLines(req, 'accept'), ['text/csv', 'text/html']);
    assert.equal(fieldValue(req, 'accept'), 'text/csv, text/html');
    assert.equal(fieldValue(req, 'other'), 'x');
    assert.equal(fieldLines(req, 'prefer'), undefined);
    assert.equal(fieldValue(req, 'prefer'), undefined);
  });
});
