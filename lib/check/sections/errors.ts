// Checks of errors: a 4xx for a request that will never be accepted, a 5xx only when a retry is
// wanted, no internal details leaked, RFC 9457 problem documents and X-Request-Id for finding the
// logged detail (CONVENTIONS.md#problem-details); 400 for malformed JSON, a non-object, a number JSON
// cannot carry, and 415 for another media type (CONVENTIONS.md#json-bodies); 400 for an id that differs
// from the path (CONVENTIONS.md#items); 405 with Allow, and HEAD wherever GET works
// (CONVENTIONS.md#methods); 406 (CONVENTIONS.md#content-negotiation); 413 before the body is read
// (CONVENTIONS.md#body-cap). problem-document judges the format of errors once; the other checks judge
// their status, and the format too only while it holds (expect.ts expectProblem).
import { check, JSON_BODY, JSON_CREATE_ONLY } from '../define.js';
import {
  expectHeader,
  expectProblem,
  expectProblemDocument,
  expectStatus,
  expectThat,
  routeOrBlocked,
  seen,
} from '../expect.js';
import { ProbeRefused, type ProbeResponse } from '../probe.js';
import { transportFailure } from '../reach.js';
import { CheckFailed, CheckSkipped, type Check, type CheckContext } from '../types.js';

/** The body cap every route has by default, 1 MiB (CONVENTIONS.md#body-cap). */
const BODY_CAP = 1_048_576;
/** A method no route of the conventions takes, that HTTP parsers still accept as a method token. */
const UNKNOWN_METHOD = 'PROPFIND';
/** A mark in a malformed body: an error that quotes the body back shows it. */
const MARKER = 'zq81marker';
/**
 * What internal details look like when they leak: stack frames, module paths, source positions,
 * runtime parser messages (V8's JSON.parse, Python's json) and exception names.
 */
const LEAKS: readonly RegExp[] = [
  /\n\s+at\s/,
  /\bat\s+[\w$.<>]+\s+\([^)]*:\d+:\d+\)/,
  /node_modules/,
  /\.(?:js|mjs|cjs|ts|py|java|go|rb):\d+/,
  /file:\/\//,
  /(?:^|[\s"'(])\/(?:home|usr|var|opt|srv|app|root|tmp|work)\//,
  /Unexpected token|Unexpected end of JSON input|in JSON at position/,
  /Expecting value: line \d+|Traceback \(most recent call last\)/,
  /\b(?:SyntaxError|TypeError|RangeError|ReferenceError)\b/,
  /Maximum call stack size exceeded/,
];

export const ERROR_CHECKS: readonly Check[] = [
  check('errors', 'problem-document', { anchor: 'problem-details', rfc: 'RFC 9457 §3' },
    'An error answers application/problem+json with type, title, status and detail',
    async (c) => {
      const response = await c.send({ method: 'GET', path: `/${c.collection}/${c.newId()}` });
      const problem = expectProblemDocument(response, 404);
      const detailed = typeof problem['detail'] === 'string' && problem['detail'] !== '';
      expectThat(detailed, `the problem has no "detail": ${seen(response)}`);
      const named = typeof problem['type'] === 'string' && typeof problem['title'] === 'string';
      expectThat(named, `"type" and "title" are not strings: ${seen(response)}`);
    }),

  check('errors', 'malformed-json', { anchor: 'json-bodies' },
    'A malformed JSON body is refused with 400 (never a 5xx: a retry cannot help)',
    async (c) => {
      const response = await putNew(c, `{"${MARKER}": nul}`);
      await expectProblem(c, response, 400);
    }),

  check('errors', 'not-an-object', { anchor: 'json-bodies' },
    'A JSON body that is not an object (an array, a string) is refused with 400',
    async (c) => {
      for (const body of ['[{"name": "in an array"}]', '"a string"']) {
        await expectProblem(c, await putNew(c, body), 400);
      }
    }),

  check('errors', 'id-mismatch', { anchor: 'items' },
    'A body whose "id" differs from the path is refused with 400 and nothing is stored',
    async (c) => {
      const path = `/${c.collection}/${c.newId()}`;
      const body = JSON.stringify({ id: `${c.collection}-other`, name: 'wrong id' });
      const sent = await c.send({ method: 'PUT', path, headers: JSON_CREATE_ONLY, body });
      await expectProblem(c, await routeOrBlocked(c, sent, 'item'), 400);
      expectStatus(await c.send({ method: 'GET', path }), 404);
    }),

  check('errors', 'inexact-number', { anchor: 'json-bodies' },
    'A number JSON cannot carry exactly (9007199254740993) is refused with 400, not silently changed',
    async (c) => {
      const id = c.newId();
      // Written as text: JSON.stringify would already have rounded the number to 9007199254740992.
      const body = `{"id": "${id}", "count": 9007199254740993}`;
      const path = `/${c.collection}/${id}`;
      const sent = await c.send({ method: 'PUT', path, headers: JSON_CREATE_ONLY, body });
      const response = await routeOrBlocked(c, sent, 'item');
      await expectProblem(c, response, 400);
    }),

  check('errors', 'deep-nesting', { anchor: 'problem-details' },
    'A deeply nested JSON body (100 000 levels) never gets a 5xx',
    async (c) => {
      const depth = 100_000;
      const response = await putNew(c, `{"nested": ${'['.repeat(depth)}${']'.repeat(depth)}}`);
      expectThat(response.status < 500, `a deeply nested body answered ${seen(response)}`);
    }),

  check('errors', 'no-internal-details', { anchor: 'problem-details' },
    'Error bodies carry no stack traces, file paths, parser messages or slices of the body',
    async (c) => {
      const bodies = [
        await putNew(c, `{"${MARKER}": nul}`),
        await putNew(c, `{"${MARKER}": [1, 2,, 3]}`),
      ];
      const malformed = encodeURIComponent(`${MARKER}(( eq`);
      const filter = await c.send({ method: 'GET', path: `/${c.collection}?$filter=${malformed}` });
      // Only an error has an error body to read. Which requests must be refused, and with which status,
      // is the rule of errors/malformed-json and paging/filter-syntax-error: a server that takes them
      // fails there, not here again.
      const errors = [...bodies, filter].filter((response) => response.status >= 400);
      if (errors.length === 0) {
        throw new CheckSkipped('no request was refused (malformed bodies, a malformed $filter): no error body to read');
      }
      for (const response of errors) {
        const leak = LEAKS.find((pattern) => pattern.test(response.text));
        expectThat(leak === undefined, `the error body matches ${String(leak)}: ${seen(response)}`);
      }
      // The detail is resapi's own words, never the parser's message or a slice of the body
      // (CONVENTIONS.md#json-bodies).
      for (const response of bodies.filter((each) => each.status >= 400)) {
        expectThat(!response.text.includes(MARKER), `a malformed body is quoted back: ${seen(response)}`);
      }
    }),

  check('errors', 'request-id', { anchor: 'problem-details' },
    'An error response carries X-Request-Id, the id under which the server logged the details',
    async (c) => {
      // Any error will do: which status a malformed body gets is errors/malformed-json's rule.
      const response = await putNew(c, '{');
      if (response.status < 400) {
        throw new CheckSkipped(`a malformed body was not refused (${response.status}): no error to read`);
      }
      expectThat(expectHeader(response, 'x-request-id').trim() !== '', `X-Request-Id is empty: ${seen(response)}`);
    }),

  check('errors', 'method-not-allowed', { anchor: 'methods', rfc: 'RFC 9110 §15.5.6', needs: ['item'] },
    'A method the resource does not allow answers 405 with an Allow field listing the allowed ones',
    async (c) => {
      const item = await c.newItem();
      const body = JSON.stringify({ name: 'posted to an item' });
      const response = await c.send({ method: 'POST', path: item.path, headers: JSON_BODY, body });
      await expectProblem(c, response, 405);
      const allow = expectHeader(response, 'allow').split(',').map((method) => method.trim().toUpperCase());
      expectThat(allow.includes('GET') && !allow.includes('POST'), `Allow: ${allow.join(', ')}`);
    }),

  check('errors', 'unknown-method', { anchor: 'methods', rfc: 'RFC 9110 §15.6.2, §15.5.6', needs: ['item'] },
    'A method the server does not implement answers 501 (or 405 with Allow), never a success',
    async (c) => {
      const item = await c.newItem();
      const response = await c.send({ method: UNKNOWN_METHOD, path: item.path });
      const refused = response.status === 501 || (response.status === 405 && response.header('allow') !== undefined);
      expectThat(refused, `${UNKNOWN_METHOD} answered ${seen(response)}`);
    }),

  check('errors', 'not-acceptable', { anchor: 'content-negotiation', rfc: 'RFC 9110 §15.5.7', needs: ['item'] },
    'An Accept that allows no representation the resource has answers 406',
    async (c) => {
      const item = await c.newItem();
      const headers = { Accept: 'application/x-resapi-none' };
      const response = await c.send({ method: 'GET', path: item.path, headers });
      await expectProblem(c, response, 406);
    }),

  check('errors', 'unsupported-media-type', { anchor: 'json-bodies', rfc: 'RFC 9110 §15.5.16' },
    'A request body in an unsupported Content-Type (text/plain on a JSON route) answers 415',
    async (c) => {
      const response = await c.send({
        method: 'PUT',
        path: `/${c.collection}/${c.newId()}`,
        headers: { 'Content-Type': 'text/plain', 'If-None-Match': '*' },
        body: 'name=plain text',
      });
      await expectProblem(c, await routeOrBlocked(c, response, 'item'), 415);
    }),

  check('errors', 'content-too-large', { anchor: 'body-cap', rfc: 'RFC 9110 §15.5.14' },
    'A declared Content-Length over 1 MiB answers 413 before the body is read',
    async (c) => {
      // The length is declared and no byte of the body is sent: a server that waits to read it never
      // answers, and the probe's timeout fails the check, saying so. (Had the server gone, the engine
      // finds out by asking again, and blocks the rest of the run.)
      const declared = String(BODY_CAP + 1);
      let response: ProbeResponse;
      try {
        response = await c.send({
          method: 'PUT',
          path: `/${c.collection}/${c.newId()}`,
          headers: { ...JSON_CREATE_ONLY, 'Content-Length': declared },
        });
      } catch (error) {
        if (error instanceof ProbeRefused) throw error;
        const waited = `${transportFailure(error)} to a PUT declaring Content-Length: ${declared} with no body sent`;
        throw new CheckFailed(`${waited}: the server waits for a body it should refuse`);
      }
      await expectProblem(c, await routeOrBlocked(c, response, 'item'), 413);
    }),

  check('errors', 'head', { anchor: 'methods', rfc: 'RFC 9110 §9.3.2', needs: ['item'] },
    'HEAD works wherever GET does: same status and validators as GET, and no body',
    async (c) => {
      const item = await c.newItem();
      for (const path of [item.path, `/${c.collection}`]) {
        const get = await c.send({ method: 'GET', path });
        const head = await c.send({ method: 'HEAD', path });
        expectStatus(head, get.status);
        const body = head.bytes.length > 0 || head.bodyWhereNone;
        expectThat(!body, `HEAD ${path} answered with a body: ${seen(head)}`);
        const [headTag, headType] = [head.header('etag'), head.header('content-type')];
        const [getTag, getType] = [get.header('etag'), get.header('content-type')];
        expectThat(
          headTag === getTag && headType === getType,
          `HEAD ${path} answered ETag ${String(headTag)}, Content-Type ${String(headType)}; ` +
            `GET ${String(getTag)}, ${String(getType)}`,
        );
      }
    }),
];

/**
 * PUT of `body` as JSON to a new id with If-None-Match: * (so no precondition stands in the way). A
 * server that cannot create with PUT at all (404, 405; resources/put-create failed) leaves nothing to
 * judge, and the check is blocked by that failure.
 */
async function putNew(c: CheckContext, body: string): Promise<ProbeResponse> {
  const path = `/${c.collection}/${c.newId()}`;
  return routeOrBlocked(c, await c.send({ method: 'PUT', path, headers: JSON_CREATE_ONLY, body }), 'item');
}
