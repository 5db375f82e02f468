// Reading a whole listing as a client does: GET the first page, then each page's @nextLink until a
// page has none (CONVENTIONS.md#paging). The number of pages is bounded, so a server whose links go
// round in a circle fails the test instead of hanging it.
import assert from 'node:assert/strict';
import { request, type TestResponse } from './http.js';

/** More pages than any listing in the tests has. */
export const MAX_PAGES = 1000;

/** One page as it was read. */
export interface Page<T> {
  readonly response: TestResponse;
  readonly value: readonly T[];
  /** The page's @nextLink exactly as the server wrote it. */
  readonly nextLink: string | undefined;
}

export interface WalkOptions<T> {
  /** Sent with every page's request (Prefer: maxpagesize=…, Accept, Authorization). */
  readonly headers?: Readonly<Record<string, string>>;
  /** Appended to every failure message as it is: the seed of a randomized test, … */
  readonly context?: string;
  /** Called with each page once it is read, before the next one is asked for. */
  readonly onPage?: (page: Page<T>, index: number) => void | Promise<void>;
}

/** Every item of the listing at `path`, in the order the pages gave them; each page must be a 200. */
export async function walkPages<T = Record<string, unknown>>(
  base: string,
  path: string,
  options: WalkOptions<T> = {},
): Promise<T[]> {
  const context = options.context === undefined ? '' : ` ${options.context}`;
  const items: T[] = [];
  let next: string | undefined = path;
  for (let index = 0; next !== undefined; index++) {
    assert.ok(index < MAX_PAGES, `more than ${MAX_PAGES} pages from ${path}${context}`);
    const response = await request(base, next, { headers: options.headers ?? {} });
    assert.equal(response.status, 200, `GET ${next}: ${response.text.slice(0, 300)}${context}`);
    const body = response.json() as { value: T[]; '@nextLink'?: string };
    items.push(...body.value);
    const nextLink = body['@nextLink'];
    await options.onPage?.({ response, value: body.value, nextLink }, index);
    next = nextLink === undefined ? undefined : targetOf(nextLink, base);
  }
  return items;
}

/** A link as a request target: a path is used as it is, an absolute URL (--base-url) by its path and query. */
function targetOf(link: string, base: string): string {
  if (link.startsWith('/')) return link;
  const url = new URL(link, base);
  return url.pathname + url.search;
}
