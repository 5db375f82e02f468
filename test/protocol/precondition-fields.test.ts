// Reading the four precondition fields from raw field lines (lib/protocol/conditional.ts,
// CONVENTIONS.md#precondition-order): every line kept, so a date sent twice can be ignored (RFC 9110 §13.1.3–4).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readPreconditionFields } from '../../lib/protocol/conditional.js';

describe('readPreconditionFields', () => {
  it('should keep every field line of each of the four fields, in order, whatever the case of the name', () => {
    const raw = ['Host', 'x', 'If-Match', '"a"', 'if-match', '"b"', 'IF-NONE-MATCH', '*', 'If-Modified-Since', 'd1', 'If-Modified-Since', 'd2', 'If-Unmodified-Since', 'd3'];
    assert.deepEqual(readPreconditionFields(raw), { ifMatch: ['"a"', '"b"'], ifNoneMatch: ['*'], ifModifiedSince: ['d1', 'd2'], ifUnmodifiedSince: ['d3'] });
  });

  it('should leave out the fields that were not sent, and names that only start like them', () => {
    assert.deepEqual(readPreconditionFields(['If-Range', '"a"', 'Iffy-Header', 'x', 'Accept', '*/*']), {});
    assert.deepEqual(readPreconditionFields([]), {});
  });
});
