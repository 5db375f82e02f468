// The bodies the outbox's deliveries share (CONVENTIONS.md#transactional-outbox, CONVENTIONS.md#outbox):
// an event's exact bytes are stored once, in `$outbox-events` under the event's id, with the ids of
// its deliveries when it has more than one (events.ts), and every attempt of every delivery of the
// event sends them. A body is
// kept while a delivery of its event may still be sent (pending, failed, or dead: a dead one can be
// sent again by `$retry`), and dropped once every delivery is delivered, or with the deliveries
// when they expire.
//
// The drop goes in the write that says a delivery is `delivered` when every other delivery of its
// event is delivered already (an event with one subscriber: always), so a delivery costs one write.
// Otherwise it is decided again once that write is in: two deliveries of one event finishing together
// are written in one batch, and each, deciding before it, sees the other still pending; deciding
// after, the last to be written sees every one delivered. A crash in between keeps the body until it
// expires (30 days).
//
// A data dir written before events shared their bodies holds a copy per delivery in `$outbox-bodies`
// under the delivery's id; such a delivery is sent from its copy, which is dropped once it is
// delivered, as before. A forward of a received event (forward.ts) keeps its body there too: it is
// the one delivery of its event.
import type { SharedBodies } from '../jobs/policy.js';
import type { Logger } from '../log.js';
import type { Mutation, Store, StoredRecord } from '../store/types.js';
import type { Writer } from '../writes/writer.js';
import { eventBody, OUTBOX_BODY_SPACE, OUTBOX_EVENT_SPACE, OUTBOX_SPACE } from './events.js';

export interface EventBodiesOptions {
  readonly store: Store;
  readonly writer: Writer;
  readonly log: Logger;
  /** The status of a delivery sent to its end (`delivered`). */
  readonly done: string;
}

export class EventBodies implements SharedBodies {
  constructor(private readonly options: EventBodiesOptions) {}

  bodyOf(record: StoredRecord): string | undefined {
    const { store } = this.options;
    // A delivery's own body first, as `release` looks: a forward's event id is a provider's, which
    // must never find a sent event's body that happens to have the same id.
    const own = store.get(OUTBOX_BODY_SPACE, record.id)?.doc['body'];
    if (typeof own === 'string') return own;
    const eventId = record.doc['eventId'];
    const event = typeof eventId === 'string' ? store.get(OUTBOX_EVENT_SPACE, eventId) : undefined;
    return event === undefined ? undefined : eventBody(event, record.doc);
  }

  dropWithDone(record: StoredRecord): Mutation[] {
    const { store } = this.options;
    if (store.get(OUTBOX_BODY_SPACE, record.id) !== undefined) {
      return [{ kind: 'delete', collection: OUTBOX_BODY_SPACE, id: record.id }];
    }
    const eventId = record.doc['eventId'];
    const event = typeof eventId === 'string' ? store.get(OUTBOX_EVENT_SPACE, eventId) : undefined;
    if (event === undefined || this.stillNeeded(event, record.id, false)) return [];
    return [{ kind: 'delete', collection: OUTBOX_EVENT_SPACE, id: event.id }];
  }

  async release(record: StoredRecord): Promise<void> {
    const { store } = this.options;
    const own = store.get(OUTBOX_BODY_SPACE, record.id);
    if (own !== undefined) {
      await this.drop(own);
      return;
    }
    const eventId = record.doc['eventId'];
    const event = typeof eventId === 'string' ? store.get(OUTBOX_EVENT_SPACE, eventId) : undefined;
    if (event !== undefined && !this.stillNeeded(event, record.id, true)) await this.drop(event);
  }

  /**
   * Does a delivery of the event still need its body? The look starts at the delivery after `id`
   * and goes round, to `id` itself when `itself` (after its write: its own outcome may have been
   * lost), so deliveries that finish in the order they were written stop at the next one instead of
   * reading them all each time. An event without a list has one delivery: `id`.
   */
  private stillNeeded(event: StoredRecord, id: string, itself: boolean): boolean {
    const listed = event.doc['deliveries'];
    const deliveries = Array.isArray(listed) ? listed : [id];
    const start = deliveries.indexOf(id) + 1;
    const others = itself || start === 0 ? deliveries.length : deliveries.length - 1;
    for (let n = 0; n < others; n++) {
      const delivery = deliveries[(start + n) % deliveries.length];
      const stored = typeof delivery === 'string' ? this.options.store.get(OUTBOX_SPACE, delivery) : undefined;
      // A delivery gone (expired with its event) needs nothing.
      if (stored !== undefined && stored.doc['status'] !== this.options.done) return true;
    }
    return false;
  }

  /** Deletes a body record as it was read: if two deliveries drop it at once, the second finds it gone. */
  private async drop(body: StoredRecord): Promise<void> {
    const { collection, id, version } = body;
    const written = await this.options.writer.write([{ kind: 'delete', collection, id, expect: { version } }]);
    if (!written.ok && written.reason === 'unavailable') {
      const message = 'webhook deliveries: cannot drop a delivered body now; it goes when it expires';
      this.options.log('warn', message, { id: body.id, detail: written.detail });
    }
  }
}
