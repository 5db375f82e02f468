// Built pages of user collections, kept until the collection changes (README, Performance): a page's
// bytes, and so its strong ETag (CONVENTIONS.md#etags: derived from the exact bytes of the representation
// sent), are a function of the request (its path, query string, page size and media type) and of
// the collection's content. So a page built once answers every identical request, and every
// revalidation (304), without a scan, until a commit touches the collection; the commit drops the
// collection's pages (the store tells every commit to its watchers as it is applied). A page built
// while a commit landed is not kept: it may have read items from both sides of it.
//
// Bounded by entries and bytes, the least recently used first out, so no stream of distinct queries
// grows it. System spaces are never cached: their records expire without a commit.
import { isCollectionName } from '../names.js';
import type { Store } from '../store/types.js';
import type { Representation } from '../protocol/representation.js';

export interface PageCacheLimits {
  readonly entries: number;
  readonly bytes: number;
}

const DEFAULT_PAGE_CACHE_LIMITS: PageCacheLimits = { entries: 512, bytes: 32 * 1024 * 1024 };

interface Cached {
  readonly collection: string;
  readonly page: BuiltPage;
}

/** A page as bytes, before any precondition: what GET answers, and what POST's If-Match compares with. */
export interface BuiltPage {
  readonly representation: Representation;
  readonly contentType: string;
  readonly nextLink?: string;
}

export class PageCache {
  /** Every cached page by collection and key; Map order is the order of last use. */
  private readonly pages = new Map<string, Cached>();
  /** The keys of `pages` per collection, so a commit drops its collection's pages without a search. */
  private readonly byCollection = new Map<string, Set<string>>();
  /** Per collection, how many commits have touched it since the process started. */
  private readonly generations = new Map<string, number>();
  private bytes = 0;
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

  get(collection: string, key: string): BuiltPage | undefined {
    if (!isCollectionName(collection)) return undefined;
    const id = `${collection}\n${key}`;
    const cached = this.pages.get(id);
    if (cached === undefined) return undefined;
    this.pages.delete(id);
    this.pages.set(id, cached);
    return cached.page;
  }

  /** Keeps `page` if the collection has not changed since `generation`. */
  keep(collection: string, key: string, generation: number, page: BuiltPage): void {
    if (!isCollectionName(collection) || this.generation(collection) !== generation) return;
    const size = page.representation.bytes.length;
    if (size > this.limits.bytes) return;
    const id = `${collection}\n${key}`;
    this.drop(id);
    this.pages.set(id, { collection, page });
    let ids = this.byCollection.get(collection);
    if (ids === undefined) this.byCollection.set(collection, (ids = new Set()));
    ids.add(id);
    this.bytes += size;
    for (const [oldest] of this.pages) {
      if (this.pages.size <= this.limits.entries && this.bytes <= this.limits.bytes) break;
      this.drop(oldest);
    }
  }

  close(): void {
    this.unwatch();
    this.pages.clear();
    this.byCollection.clear();
    this.bytes = 0;
  }

  private changed(collection: string): void {
    this.generations.set(collection, this.generation(collection) + 1);
    const ids = this.byCollection.get(collection);
    if (ids === undefined) return;
    for (const id of ids) this.drop(id);
  }

  private drop(id: string): void {
    const cached = this.pages.get(id);
    if (cached === undefined) return;
    this.pages.delete(id);
    const ids = this.byCollection.get(cached.collection);
    ids?.delete(id);
    if (ids?.size === 0) this.byCollection.delete(cached.collection);
    this.bytes -= cached.page.representation.bytes.length;
  }
}
