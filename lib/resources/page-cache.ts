// Built pages of user collections, kept until the collection changes (README, Performance): a page's
// bytes, and so its strong ETag (CONVENTIONS.md#etags: derived from the exact bytes of the representation
// sent), are a function of the request (its path, query string, page size and media type) and of
// the collection's content. So a page built once answers every identical request, and every
// revalidation (304), without a scan, until a commit touches the collection; the commit drops the
// collection's pages (the store tells every commit to its watchers as it is applied). A page built
// while a commit landed is not kept: it may have read items from both sides of it.
//
// Beside each page it keeps the answers prepared for it (lib/resources/prepared-reads.ts), one per
// variant of the requests that read it (with or without Preference-Applied): they go when the page goes.
//
// Bounded by entries and bytes (pages and prepared heads), the least recently used first out, so no
// stream of distinct queries grows it. System spaces are never cached: their records expire without
// a commit.
import { isCollectionName } from '../names.js';
import type { Store } from '../store/types.js';
import type { Representation } from '../protocol/representation.js';
import type { PreparedRead } from './prepared-reads.js';

export interface PageCacheLimits {
  readonly entries: number;
  readonly bytes: number;
}

const DEFAULT_PAGE_CACHE_LIMITS: PageCacheLimits = { entries: 512, bytes: 32 * 1024 * 1024 };
/** Prepared answers kept per page: the variants a page's requests come in are few (Preference-Applied or not). */
const MAX_PREPARED = 4;

/** A page as bytes, before any precondition: what GET answers, and what POST's If-Match compares with. */
export interface BuiltPage {
  readonly representation: Representation;
  readonly contentType: string;
  readonly nextLink?: string;
  /** The page size in force: the request's for a first page, its token's for a later one. */
  readonly pageSize: number;
}

/** What names a page among its collection's pages (lib/resources/paging.ts says why these). */
export interface PageKey {
  /** The scope of the walk, which a later page's token must name. */
  readonly scope: string;
  readonly media: string;
  readonly pageSize: number;
  /** The query string as sent. */
  readonly query: string;
}

/** A kept page and the answers prepared for it so far, by variant. */
export interface KeptPage {
  readonly page: BuiltPage;
  readonly prepared: ReadonlyMap<string, PreparedRead>;
}

interface Cached extends KeptPage {
  readonly key: PageKey;
  readonly prepared: Map<string, PreparedRead>;
  /** The bytes of its page and of its prepared heads. */
  bytes: number;
  /** The cache's use count when it was last kept or read: the smallest is the least recently used. */
  used: number;
}

/** A collection's kept pages by query string; the few that share one differ in scope, media type or size. */
type Kept = Map<string, Cached[]>;

export class PageCache {
  /**
   * The kept pages of each collection, so a commit drops its collection's pages without a search. A
   * page is found by its query string, then among the few kept under it by the rest of its key: no
   * key is built and hashed per request but the query string itself.
   */
  private readonly pages = new Map<string, Kept>();
  /** Per collection, how many commits have touched it since the process started. */
  private readonly generations = new Map<string, number>();
  private entries = 0;
  private bytes = 0;
  /**
   * Counts keeps and reads. A read only stamps its page with the count; the least recently used page
   * is searched for when one must go, after a build that costs far more than the search.
   */
  private uses = 0;
  private readonly unwatch: () => void;

  constructor(
    store: Store,
    private readonly limits: PageCacheLimits = DEFAULT_PAGE_CACHE_LIMITS,
  ) {
    this.unwatch = store.watch((commit) => {
      let last: string | undefined;
      for (const applied of commit.applied) {
        const collection = applied.mutation.collection;
        // A batch mostly touches one collection many times (a bulk CSV): once is enough.
        if (collection !== last && isCollectionName(collection)) this.changed(collection);
        last = collection;
      }
    });
  }

  /** Where a page build starts: what `keep` later compares, to tell whether the collection changed meanwhile. */
  generation(collection: string): number {
    return this.generations.get(collection) ?? 0;
  }

  /** The page kept under `key`, if any (never one of a system space: none is kept). */
  get(collection: string, key: PageKey): KeptPage | undefined {
    const cached = this.find(collection, key);
    if (cached !== undefined) cached.used = ++this.uses;
    return cached;
  }

  /** Keeps `page` if the collection has not changed since `generation`. */
  keep(collection: string, key: PageKey, generation: number, page: BuiltPage): void {
    if (!isCollectionName(collection) || this.generation(collection) !== generation) return;
    const size = page.representation.bytes.length;
    if (size > this.limits.bytes) return;
    const earlier = this.find(collection, key);
    if (earlier !== undefined) this.drop(collection, earlier);
    let kept = this.pages.get(collection);
    if (kept === undefined) this.pages.set(collection, (kept = new Map()));
    let shared = kept.get(key.query);
    if (shared === undefined) kept.set(key.query, (shared = []));
    shared.push({ key, page, prepared: new Map(), bytes: size, used: ++this.uses });
    this.entries++;
    this.bytes += size;
    this.trim();
  }

  /** Keeps `prepared` beside the kept page, as its answer for `variant`, while the page is kept. */
  prepare(collection: string, key: PageKey, variant: string, prepared: PreparedRead): void {
    const cached = this.find(collection, key);
    if (cached === undefined || cached.prepared.has(variant) || cached.prepared.size >= MAX_PREPARED) return;
    cached.prepared.set(variant, prepared);
    cached.bytes += prepared.headBytes;
    this.bytes += prepared.headBytes;
    this.trim();
  }

  close(): void {
    this.unwatch();
    this.pages.clear();
    this.entries = 0;
    this.bytes = 0;
  }

  private find(collection: string, key: PageKey): Cached | undefined {
    const shared = this.pages.get(collection)?.get(key.query);
    if (shared === undefined) return undefined;
    for (const cached of shared) {
      const kept = cached.key;
      if (kept.pageSize === key.pageSize && kept.media === key.media && kept.scope === key.scope) return cached;
    }
    return undefined;
  }

  /** Drops the least recently used pages until both limits hold. */
  private trim(): void {
    while (this.entries > this.limits.entries || this.bytes > this.limits.bytes) {
      let oldest: { collection: string; cached: Cached } | undefined;
      for (const [collection, kept] of this.pages) {
        for (const shared of kept.values()) {
          for (const cached of shared) {
            if (oldest === undefined || cached.used < oldest.cached.used) oldest = { collection, cached };
          }
        }
      }
      if (oldest === undefined) return;
      this.drop(oldest.collection, oldest.cached);
    }
  }

  private changed(collection: string): void {
    this.generations.set(collection, this.generation(collection) + 1);
    const kept = this.pages.get(collection);
    if (kept === undefined) return;
    this.pages.delete(collection);
    for (const shared of kept.values()) {
      this.entries -= shared.length;
      for (const cached of shared) this.bytes -= cached.bytes;
    }
  }

  private drop(collection: string, cached: Cached): void {
    const kept = this.pages.get(collection);
    const shared = kept?.get(cached.key.query);
    if (kept === undefined || shared === undefined) return;
    const at = shared.indexOf(cached);
    if (at === -1) return;
    shared.splice(at, 1);
    if (shared.length === 0) kept.delete(cached.key.query);
    if (kept.size === 0) this.pages.delete(collection);
    this.entries--;
    this.bytes -= cached.bytes;
  }
}
