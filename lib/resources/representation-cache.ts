// The item representations the server serves (CONVENTIONS.md#etags): a record is immutable, so its
// JSON bytes and ETag are computed once and remembered with the record object (lib/store/state.ts
// derivedOf); a write makes a new record object and so a new entry. The write path computes them
// before the commit (the serialization is part of validating a document) and primes this cache with
// them. An item read also keeps its Last-Modified text (RFC 9110 §8.8.2), formatted once per version.
import { formatHttpDate } from '../protocol/http-date.js';
import { represent, type Representation } from '../protocol/representation.js';
import { derivedOf, keepDerived } from '../store/state.js';
import type { StoredRecord } from '../store/types.js';

const MS_PER_SECOND = 1000;

export class RepresentationCache {
  /**
   * The representations of records the store did not make (a test's own objects); a stored record keeps
   * its own (lib/store/state.ts derivedOf), which costs a write no WeakMap entry.
   */
  private readonly others = new WeakMap<StoredRecord, Representation>();
  /** The second the last Last-Modified text was formatted for, and that text. */
  private dateSecond = Number.NaN;
  private dateText = '';

  /** The application/json representation of one record. */
  itemJson(record: StoredRecord): Representation {
    let representation = this.remembered(record);
    if (representation?.lastModified === undefined) {
      // Formatted once per version too: every 200 and 304 of the item carries it.
      const { bytes, etag } = representation ?? represent(JSON.stringify(record.doc));
      // Of the one shape prime makes too, so reading these fields stays monomorphic.
      representation = { bytes, etag, lastModified: formatHttpDate(record.modifiedAt) };
      this.remember(record, representation);
    }
    return representation;
  }

  /**
   * Remembers the representation the write path already computed for a record it just committed, with
   * its Last-Modified text: the write's own answer carries it at once.
   */
  prime(record: StoredRecord, representation: Representation): void {
    const { bytes, etag } = representation;
    this.remember(record, { bytes, etag, lastModified: this.httpDate(record.modifiedAt) });
  }

  private remembered(record: StoredRecord): Representation | undefined {
    return (derivedOf(record) as Representation | undefined) ?? this.others.get(record);
  }

  private remember(record: StoredRecord, representation: Representation): void {
    if (!keepDerived(record, representation)) this.others.set(record, representation);
  }

  /** formatHttpDate, formatted once per second: an HTTP-date has whole seconds, and a second's writes share it. */
  private httpDate(ms: number): string {
    const second = Math.floor(ms / MS_PER_SECOND);
    if (second !== this.dateSecond) {
      this.dateText = formatHttpDate(ms);
      this.dateSecond = second;
    }
    return this.dateText;
  }
}

