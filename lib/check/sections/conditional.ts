// Checks of conditional requests: create with If-None-Match: * (CONVENTIONS.md#conditional-create),
// replace with If-Match (CONVENTIONS.md#conditional-replace), 428 without either
// (CONVENTIONS.md#precondition-required), preconditions before the body
// (CONVENTIONS.md#precondition-order), 304 on reads (CONVENTIONS.md#conditional-reads) and ETags
// (CONVENTIONS.md#etags); RFC 9110 §13 for the comparison functions, lists, `*` and W/. Undo is an
// idempotence check (idempotence.ts).
// Every check works on items of the run's own collection, except the one that needs a collection
// in two representations, which reads the shared listing.
import type { JsonObject } from '../../json.js';
import { parseEntityTag } from '../../protocol/etag.js';
import { check, JSON_BODY } from '../define.js';
import {
  expectHeader,
  expectObject,
  expectProblem,
  expectStatus,
  expectThat,
  routeOrBlocked,
  seen,
} from '../expect.js';
import type { ProbeResponse } from '../probe.js';
import { CheckFailed, CheckSkipped, type Check, type CheckContext, type MadeItem } from '../types.js';

/**
 * Media types tried, in order, as the second representation of a collection
 * (CONVENTIONS.md#content-negotiation).
 */
const OTHER_REPRESENTATIONS: readonly string[] = ['text/csv', 'text/html'];

export const CONDITIONAL_CHECKS: readonly Check[] = [
  check('conditional', 'create', { anchor: 'conditional-create', needs: ['item', 'read'] },
    'PUT with If-None-Match: * creates the item: 201 with an ETag (the one an immediate GET returns) ' +
      'and a Location',
    async (c) => {
      const id = c.newId();
      const path = `/${c.collection}/${id}`;
      const created = await put(c, path, { id, name: 'created' }, { 'If-None-Match': '*' });
      expectStatus(created, 201);
      const etag = expectHeader(created, 'etag');
      const location = expectHeader(created, 'location');
      const located = new URL(location, created.url).pathname.endsWith(path);
      expectThat(located, `Location: ${location} for an item created at ${path}`);
      const read = await c.send({ method: 'GET', path });
      expectStatus(read, 200);
      expectThat(
        read.header('etag') === etag,
        `the 201 said ETag: ${etag}, the GET after it says ${read.header('etag') ?? '(none)'}`,
      );
    }),

  // Catches a server that overwrites on a second create (a lost update between two creators).
  check('conditional', 'create-existing', { anchor: 'conditional-create', needs: ['item', 'read'] },
    'PUT with If-None-Match: * on an item that exists answers 412 and leaves the item unchanged',
    async (c) => {
      const item = await c.newItem({ name: 'first' });
      const again = await put(c, item.path, { ...item.doc, name: 'second' }, { 'If-None-Match': '*' });
      expectStatus(again, 412);
      await expectUnchanged(c, item);
    }),

  check('conditional', 'replace', { anchor: 'conditional-replace', needs: ['item', 'read'] },
    'PUT with If-Match: <current ETag> replaces the item: 200 with a new ETag, ' +
      'the one an immediate GET returns',
    async (c) => {
      const item = await c.newItem({ name: 'before' });
      const replaced = await put(c, item.path, { ...item.doc, name: 'after' }, { 'If-Match': item.etag });
      expectStatus(replaced, 200);
      const etag = expectHeader(replaced, 'etag');
      expectThat(etag !== item.etag, `the replace kept the old ETag ${etag} though the item changed`);
      const read = await c.send({ method: 'GET', path: item.path });
      expectStatus(read, 200);
      expectThat(
        read.header('etag') === etag,
        `the 200 said ETag: ${etag}, the GET after it says ${read.header('etag') ?? '(none)'}`,
      );
      expectThat(expectObject(read)['name'] === 'after', `the item read back after the replace is ${seen(read)}`);
    }),

  // The stale tag is a real one the server issued before the item changed. A server that ignores
  // If-Match fails either at the replace that makes the tag stale (428) or at the stale PUT (200).
  check('conditional', 'if-match-stale',
    { anchor: 'conditional-replace', rfc: 'RFC 9110 §13.1.1', needs: ['item', 'read', 'replace'] },
    'PUT with an If-Match ETag the item no longer has answers 412 and leaves the item unchanged',
    async (c) => {
      const item = await c.newItem({ name: 'first' });
      const current = await replace(c, item, { name: 'second' });
      const stale = await put(c, item.path, { ...item.doc, name: 'lost update' }, { 'If-Match': item.etag });
      expectStatus(stale, 412);
      await expectUnchanged(c, current);
    }),

  check('conditional', 'if-match-list',
    { anchor: 'conditional-replace', rfc: 'RFC 9110 §13.1.1', needs: ['item', 'replace'] },
    'If-Match with a comma list that holds the current ETag among stale ones succeeds',
    async (c) => {
      const item = await c.newItem();
      const listed = `${staleTag(item)}, ${item.etag}`;
      const replaced = await put(c, item.path, { ...item.doc, name: 'listed' }, { 'If-Match': listed });
      expectStatus(replaced, 200);
    }),

  // A server that compares If-Match weakly lets a W/ tag (which promises only equivalent content,
  // not the same bytes) guard a write. Where items are tagged weakly (strong-item-etag failed), no
  // If-Match can match at all and there is no comparison to judge.
  check('conditional', 'if-match-strong',
    { anchor: 'conditional-replace', rfc: 'RFC 9110 §13.1.1', needs: ['item', 'strong-etag'] },
    'If-Match uses strong comparison: the W/ form of the current ETag does not match, ' +
      'so the PUT answers 412',
    async (c) => {
      const item = await c.newItem();
      const weak = await put(c, item.path, { ...item.doc, name: 'weakly guarded' }, { 'If-Match': `W/${item.etag}` });
      expectStatus(weak, 412);
    }),

  // A server that treats If-Match on a missing item as a create resurrects what someone deleted. One
  // whose PUT cannot create at all (404, 405; resources/put-create failed) rightly ignores the
  // precondition (RFC 9110 §13.2.1): the check is blocked by that failure, not failed.
  check('conditional', 'if-match-absent', { anchor: 'conditional-replace', rfc: 'RFC 9110 §13.1.1' },
    'PUT with If-Match (a tag or *) on an item that does not exist answers 412 and creates nothing',
    async (c) => {
      const id = c.newId();
      const path = `/${c.collection}/${id}`;
      const tagged = await put(c, path, { id, name: 'never' }, { 'If-Match': `"rcheck-absent-${id}"` });
      expectStatus(await routeOrBlocked(c, tagged, 'item'), 412);
      const any = await put(c, path, { id, name: 'never' }, { 'If-Match': '*' });
      expectStatus(await routeOrBlocked(c, any, 'item'), 412);
      const read = await c.send({ method: 'GET', path });
      expectStatus(read, 404);
    }),

  // Catches a server that lets a PUT without a validator overwrite blindly (the lost update).
  check('conditional', 'precondition-required',
    { anchor: 'precondition-required', rfc: 'RFC 6585 §3', needs: ['item', 'read'] },
    'PUT with neither If-Match nor If-None-Match answers 428 with a problem naming the header to send, ' +
      'and changes nothing',
    async (c) => {
      const item = await c.newItem({ name: 'guarded' });
      const blind = await put(c, item.path, { ...item.doc, name: 'blind write' }, {});
      const problem = await expectProblem(c, blind, 428);
      const names = /if-(none-)?match/i.test(JSON.stringify(problem));
      expectThat(names, `the 428 does not say which header to send: ${seen(blind)}`);
      await expectUnchanged(c, item);
    }),

  // A server that parses the body first answers 400, sending the client to fix a body it must not
  // send at all (it should re-read the item instead). One that takes a stale If-Match (if-match-stale
  // failed) never refuses for it, before the body or after.
  check('conditional', 'preconditions-before-body',
    { anchor: 'precondition-order', rfc: 'RFC 9110 §13.2.1', needs: ['item', 'stale'] },
    'A PUT with a stale If-Match and a malformed JSON body answers 412, not 400: ' +
      'preconditions are evaluated before the body is parsed',
    async (c) => {
      const item = await c.newItem();
      const response = await c.send({
        method: 'PUT',
        path: item.path,
        headers: { ...JSON_BODY, 'If-Match': staleTag(item) },
        body: '{"id": ',
      });
      expectStatus(response, 412);
    }),

  check('conditional', 'delete-if-match-stale',
    { anchor: 'delete-and-tombstones', rfc: 'RFC 9110 §13.1.1', needs: ['item', 'read', 'replace'] },
    'DELETE with an If-Match ETag the item no longer has answers 412 and the item stays',
    async (c) => {
      const item = await c.newItem();
      const current = await replace(c, item, { name: 'kept' });
      const deleted = await c.send({ method: 'DELETE', path: item.path, headers: { 'If-Match': item.etag } });
      expectStatus(deleted, 412);
      await expectUnchanged(c, current);
    }),

  // The prerequisite `not-modified` is the status alone: what the 304 carries is not-modified-headers'
  // rule, so a 304 without its ETag fails there once and blocks nothing.
  check('conditional', 'not-modified', { anchor: 'conditional-reads', rfc: 'RFC 9110 §15.4.5', needs: ['item'] },
    'GET with If-None-Match: <current ETag> answers 304',
    async (c) => {
      const item = await c.newItem();
      const response = await c.send({ method: 'GET', path: item.path, headers: { 'If-None-Match': item.etag } });
      expectStatus(response, 304);
    }),

  // A 304 updates the cached 200's headers (RFC 9111 §4.3.4): one without Cache-Control or Vary
  // leaves a cache applying the wrong policy to the copy it keeps. A 304 ends at its header section;
  // bytes after it would be read as the start of the next response on the connection.
  check('conditional', 'not-modified-headers',
    { anchor: 'conditional-reads', rfc: 'RFC 9110 §15.4.5', needs: ['item', 'read', 'not-modified'] },
    'A 304 carries the ETag, Cache-Control, Vary and Last-Modified the 200 had, a Date, and no content',
    async (c) => {
      const item = await c.newItem();
      const full = await c.send({ method: 'GET', path: item.path });
      expectStatus(full, 200);
      const etag = expectHeader(full, 'etag');
      const revalidated = await c.send({ method: 'GET', path: item.path, headers: { 'If-None-Match': etag } });
      expectStatus(revalidated, 304);
      expectThat(!revalidated.bodyWhereNone, 'the 304 is followed by content, where none belongs');
      expectHeader(revalidated, 'date');
      for (const name of ['etag', 'last-modified']) {
        const before = full.header(name);
        if (before === undefined) continue;
        const after = revalidated.header(name);
        expectThat(after === before, `the 200 had ${name}: ${before}, the 304 has ${after ?? '(none)'}`);
      }
      for (const name of ['cache-control', 'vary']) {
        const before = members(full, name);
        const after = members(revalidated, name);
        if (before !== '') {
          expectThat(after === before, `the 200 had ${name}: ${before}, the 304 has ${after || '(none)'}`);
        }
      }
    }),

  check('conditional', 'if-none-match-list',
    { anchor: 'conditional-reads', rfc: 'RFC 9110 §13.1.2', needs: ['item', 'not-modified'] },
    'GET with If-None-Match listing other tags and the current ETag answers 304',
    async (c) => {
      const item = await c.newItem();
      const listed = `${staleTag(item)}, ${item.etag}`;
      const response = await c.send({ method: 'GET', path: item.path, headers: { 'If-None-Match': listed } });
      expectStatus(response, 304);
    }),

  // A cache may hold the tag in its weak form; a server comparing strongly never answers 304 to it.
  check('conditional', 'if-none-match-weak',
    { anchor: 'conditional-reads', rfc: 'RFC 9110 §13.1.2', needs: ['item', 'not-modified'] },
    'If-None-Match uses weak comparison: the W/ form of the current ETag answers 304',
    async (c) => {
      const item = await c.newItem();
      const weak = item.etag.startsWith('W/') ? item.etag : `W/${item.etag}`;
      const response = await c.send({ method: 'GET', path: item.path, headers: { 'If-None-Match': weak } });
      expectStatus(response, 304);
    }),

  check('conditional', 'if-none-match-star',
    { anchor: 'conditional-reads', rfc: 'RFC 9110 §13.1.2', needs: ['item', 'not-modified'] },
    'GET with If-None-Match: * on an item that exists answers 304',
    async (c) => {
      const item = await c.newItem();
      const response = await c.send({ method: 'GET', path: item.path, headers: { 'If-None-Match': '*' } });
      expectStatus(response, 304);
    }),

  // The date sent is the item's own Last-Modified, so a server that evaluates it (wrongly, with
  // If-None-Match present) answers 304 where a 200 is due.
  check('conditional', 'if-modified-since-ignored',
    { anchor: 'conditional-reads', rfc: 'RFC 9110 §13.1.3', needs: ['item'] },
    'If-Modified-Since is ignored when If-None-Match is present: ' +
      'a non-matching tag gives 200 even with an unmodified date',
    async (c) => {
      const item = await c.newItem();
      const full = await c.send({ method: 'GET', path: item.path });
      expectStatus(full, 200);
      const since = full.header('last-modified') ?? expectHeader(full, 'date');
      const headers = { 'If-None-Match': staleTag(item), 'If-Modified-Since': since };
      const response = await c.send({ method: 'GET', path: item.path, headers });
      expectStatus(response, 200);
    }),

  // Judged on the tag the create answered, and on the GET's when it has one: whether a GET carries an
  // ETag at all is resources/get-item's rule.
  check('conditional', 'strong-item-etag', { anchor: 'etags', rfc: 'RFC 9110 §8.8.3', needs: ['item'] },
    'The ETag of an item is a well-formed strong entity-tag (no W/), since If-Match compares strongly',
    async (c) => {
      const item = await c.newItem();
      const response = await c.send({ method: 'GET', path: item.path });
      expectStatus(response, 200);
      for (const etag of new Set([item.etag, response.header('etag') ?? item.etag])) {
        const parsed = parseEntityTag(etag);
        expectThat(parsed !== undefined, `ETag: ${etag} is not an entity-tag (a quoted string, optionally W/)`);
        expectThat(parsed?.weak === false, `ETag: ${etag} is weak`);
      }
    }),

  // One tag for two representations would let a cache answer a CSV request from its JSON copy.
  check('conditional', 'etag-per-representation', { anchor: 'etags', rfc: 'RFC 9110 §8.8.3', needs: ['listing'] },
    'Two representations of one collection page (JSON and CSV or HTML) have different ETags',
    async (c) => {
      const listing = await c.listing();
      const json = await c.send({ method: 'GET', path: `/${listing}`, headers: { Accept: 'application/json' } });
      expectStatus(json, 200);
      const jsonTag = expectHeader(json, 'etag');
      for (const type of OTHER_REPRESENTATIONS) {
        const other = await c.send({ method: 'GET', path: `/${listing}`, headers: { Accept: type } });
        if (other.status !== 200 || mediaType(other) !== type) continue;
        const otherTag = expectHeader(other, 'etag');
        expectThat(otherTag !== jsonTag, `the JSON page and the ${type} page share ETag: ${jsonTag}`);
        return;
      }
      throw new CheckSkipped(`the collection is offered in none of ${OTHER_REPRESENTATIONS.join(', ')}`);
    }),
];

/** A PUT of `doc` as JSON with the given precondition fields. */
function put(
  c: CheckContext,
  path: string,
  doc: JsonObject,
  preconditions: Readonly<Record<string, string>>,
): Promise<ProbeResponse> {
  return c.send({ method: 'PUT', path, headers: { ...JSON_BODY, ...preconditions }, body: JSON.stringify(doc) });
}

/**
 * The item replaced with `fields` under its current ETag: what the check builds on, so a failure here
 * is not the rule's.
 */
async function replace(c: CheckContext, item: MadeItem, fields: JsonObject): Promise<MadeItem> {
  const doc: JsonObject = { ...item.doc, ...fields };
  const response = await put(c, item.path, doc, { 'If-Match': item.etag });
  const etag = response.header('etag');
  if (response.status !== 200 || etag === undefined) {
    throw new CheckFailed(`could not replace the test item with PUT and If-Match (${seen(response)})`);
  }
  return { ...item, etag, doc };
}

/** A well-formed strong tag that is not the item's (the server never issued it). */
function staleTag(item: MadeItem): string {
  return `"rcheck-stale-${item.id}"`;
}

/** Fails unless the item still reads as `item` says (same ETag, same name). */
async function expectUnchanged(c: CheckContext, item: MadeItem): Promise<void> {
  const read = await c.send({ method: 'GET', path: item.path });
  expectStatus(read, 200);
  const same = read.header('etag') === item.etag && expectObject(read)['name'] === item.doc['name'];
  expectThat(same, `the item changed: it now reads ETag ${read.header('etag') ?? '(none)'} ${seen(read)}`);
}

/**
 * A list field's members (Cache-Control, Vary), trimmed, lowercased and sorted, so that order and case
 * do not count ('' when absent).
 */
function members(response: ProbeResponse, name: string): string {
  return (response.header(name) ?? '')
    .split(',')
    .map((member) => member.trim().toLowerCase())
    .filter((member) => member !== '')
    .sort()
    .join(', ');
}

/** The response's media type without parameters, lowercased. */
function mediaType(response: ProbeResponse): string {
  return (response.header('content-type') ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}
