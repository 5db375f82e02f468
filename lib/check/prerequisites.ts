// What a check may need before it can judge its rule (CONVENTIONS.md#conformance-checker), by name,
// and the check that establishes it. A prerequisite is itself a check, run once per run and reported
// like any other; a check whose prerequisite failed is reported BLOCKED by that failure instead of
// failing again for it, so one root cause is one FAIL. The table is the one place a name is tied to
// its check; test/check/engine.test.ts holds it to the catalogue (each check exists, no cycle, each used).
// A check needs a prerequisite when, without it, it could only report the prerequisite's failure
// again (a stale If-Match taken, so a retried PUT cannot be refused); the variants of
// test/e2e/check-variants.test.ts, each breaking one rule, hold the declarations to that.

export const PREREQUISITES = {
  item: {
    check: 'resources/put-create',
    what: 'an item created with PUT and If-None-Match: *, and its ETag',
  },
  read: {
    check: 'resources/get-item',
    what: 'an item read back with GET, with its ETag',
  },
  'strong-etag': {
    check: 'conditional/strong-item-etag',
    what: 'items tagged with strong ETags',
  },
  delete: {
    check: 'resources/delete',
    what: 'an item deleted with DELETE',
  },
  envelope: {
    check: 'resources/envelope',
    what: 'collections answered as a { "value": [...] } envelope',
  },
  replace: {
    check: 'conditional/replace',
    what: 'an item replaced with PUT and If-Match, and its new ETag',
  },
  stale: {
    check: 'conditional/if-match-stale',
    what: 'a PUT with a stale If-Match refused with 412',
  },
  'not-modified': {
    check: 'conditional/not-modified',
    what: 'a GET with If-None-Match answered 304',
  },
  post: {
    check: 'idempotence/post-create',
    what: 'an item created with POST, and its Location',
  },
  keys: {
    check: 'idempotence/post-key-replayed',
    what: 'a POST repeated with its Idempotency-Key replayed',
  },
  bulk: {
    check: 'idempotence/bulk-once',
    what: 'a bulk file applied at /{collection}/$bulk',
  },
  undo: {
    check: 'idempotence/undo-delete',
    what: 'a deleted item restored by its undo request',
  },
  listing: {
    check: 'paging/listing',
    what: 'a collection of 12 items for the paging checks',
  },
  pages: {
    check: 'paging/max-page-size',
    what: 'a collection with more than one page',
  },
  filter: {
    check: 'paging/filter-eq',
    what: 'a $filter applied to a collection',
  },
  walk: {
    check: 'paging/next-link-walk',
    what: 'every item listed once by following "@nextLink"',
  },
  problem: {
    check: 'errors/problem-document',
    what: 'errors answered as problem documents',
  },
  receiver: {
    check: 'webhooks/accepted',
    what: 'a webhook secret configured, and a signed event accepted with it',
  },
  verifies: {
    check: 'webhooks/wrong-signature',
    what: 'a delivery signed with another secret refused, and not recorded',
  },
  dedup: {
    check: 'webhooks/duplicate',
    what: 'an event delivered twice acknowledged as a duplicate',
  },
} as const;

export type PrerequisiteName = keyof typeof PREREQUISITES;

/** The id of the check that establishes `name`. */
export function prerequisiteCheck(name: PrerequisiteName): string {
  return PREREQUISITES[name].check;
}
