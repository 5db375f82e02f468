// The rule each check holds a server to, cited as resapi's conventions document cites it: a section of
// CONVENTIONS.md by its anchor (the GitHub slug of the heading), plus, where the rule comes from an RFC
// or the OData specification, that section by its public name. The anchors are a closed list, so a
// citation that names no section of the document does not compile; test/check/catalogue.test.ts holds
// the list to the document's headings. A webhook check whose rule is the receiving scheme's (how it
// signs, what its timestamp and its event are) cites that scheme's own section when the run signs
// as another scheme than resapi's (`--webhook-scheme`).
import type { WebhookScheme } from '../config.js';

/** The heading anchors of CONVENTIONS.md a check may cite, in the document's order. */
export const ANCHORS = [
  'how-to-read-this-document', 'principles', 'resources-and-verbs', 'representations', 'running-resapi',
  'command-line', 'scripts', 'configuration-file', 'embedding', 'data-directory', 'shutdown', 'api-keys', 'cors',
  'secrets', 'addressing', 'names', 'service-document', 'routes', 'methods', 'representations-and-errors', 'items',
  'content-negotiation', 'json-bodies', 'etags', 'problem-details', 'body-cap', 'connections',
  'conditional-requests-and-caching', 'precondition-order', 'conditional-reads', 'conditional-create',
  'conditional-replace', 'precondition-required', 'put-responses', 'delete-and-tombstones', 'undo-delete',
  'post-preconditions', 'cache-control', 'vary', 'collections', 'collection-envelope', 'paging', 'page-size',
  'page-byte-budget', 'skip-tokens', 'count-and-top', 'filter-expressions', 'filter-errors-and-budget',
  'filter-grammar', 'simple-query-strings', 'query-string-decoding', 'select-and-orderby', 'summaries',
  'refused-parameters', 'query-resources', 'writes-that-are-safe-to-repeat', 'idempotent-methods', 'post-creates',
  'idempotency-keys', 'bulk-updates', 'receiving-webhooks', 'receiving-order', 'webhook-signature', 'secret-rotation',
  'webhook-timestamp', 'webhook-event-body', 'deduplication', 'durable-acceptance', 'webhook-handlers',
  'inbox-retries-and-dead-letters', 'inbox', 'receiving-sources', 'standard-webhooks-scheme', 'github-scheme',
  'stripe-scheme', 'sending-webhooks', 'subscriptions', 'transactional-outbox', 'deliveries', 'delivery-retries',
  'outbox', 'retry-schedules', 'operations', 'health', 'metrics', 'openapi', 'html-pages', 'durability',
  'client-library', 'conformance-checker',
] as const;

/** A section of CONVENTIONS.md: `etags` stands for CONVENTIONS.md#etags. */
export type Anchor = (typeof ANCHORS)[number];

/** The section that states each receiving scheme but resapi's own, whose rules have sections of their own. */
export const SCHEME_ANCHORS: Readonly<Record<Exclude<WebhookScheme, 'resapi'>, Anchor>> = {
  standard: 'standard-webhooks-scheme',
  github: 'github-scheme',
  stripe: 'stripe-scheme',
};

/**
 * Where a rule is written for a run signing as `scheme`: the scheme's section when the rule is the
 * scheme's (`schemeRule`) and the scheme is not resapi's, else the anchor the check declares.
 */
export function anchorFor(anchor: Anchor, schemeRule: boolean, scheme: WebhookScheme | undefined): Anchor {
  return schemeRule && scheme !== undefined && scheme !== 'resapi' ? SCHEME_ANCHORS[scheme] : anchor;
}

/** An RFC or OData section by its public name: `RFC 9110 §13.1.1`, `OData 4.01 Part 2 §5.1.1`. */
export type SpecReference = `RFC ${number}${string}` | `OData 4.01 Part ${number}${string}`;

/** Where a check's rule is written. */
export interface Citation {
  readonly anchor: Anchor;
  readonly rfc?: SpecReference;
}

/** The document a bare anchor refers to, as the repository and its citations name it. */
export const CONVENTIONS_DOCUMENT = 'CONVENTIONS.md';

/** `CONVENTIONS.md#etags; RFC 9110 §8.8.3`: the citation in the form comments and documents use. */
export function citationText(citation: Citation): string {
  const rule = `${CONVENTIONS_DOCUMENT}#${citation.anchor}`;
  return citation.rfc === undefined ? rule : `${rule}; ${citation.rfc}`;
}

/** The rule's address in the published document: `docsBase` (the document's URL) with the anchor as fragment. */
export function ruleUrl(docsBase: string, anchor: Anchor): string {
  return `${docsBase}#${anchor}`;
}

/** Whether `text` is an absolute http(s) URL with a host and no fragment, so `text#anchor` addresses a rule. */
export function isDocumentUrl(text: string): boolean {
  // The host is spelled out: the URL parser alone would read `https:///x` as the host `x`.
  if (!/^https?:\/\/[^/?#\s]+([/?][^#\s]*)?$/i.test(text)) return false;
  try {
    return new URL(text).hostname !== '';
  } catch {
    return false;
  }
}

/** Whether `value` is an anchor of CONVENTIONS.md (for values that did not come through the type). */
export function isAnchor(value: string): value is Anchor {
  return (ANCHORS as readonly string[]).includes(value);
}
