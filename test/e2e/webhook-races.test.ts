// End to end, in process: deliveries of one webhook event that race each other. Delivery is at least
// once, so the receiver deduplicates by the provider's event id: an id already handled is
// acknowledged with a 2xx and nothing more, and an event is processed at most once
// (CONVENTIONS.md#deduplication, CONVENTIONS.md#receiving-order).
//
// A provider that retries on a short timeout sends the same id again while the first delivery is
// still being recorded, so two copies can pass the dedup check before either is written. Whatever
// the interleaving, exactly one copy may be answered "accepted", every other copy "duplicate", and
// the handler may run once. Each case runs on the memory store and on a data dir, where the
// acceptance waits for a group commit (fsync) and the gap between the check and the write is widest.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, request as httpRequest } from 'node:http';
import type { JsonObject } from '../../lib/json.js';
import { eventually } from '../support/eventually.js';
import { mulberry32, replayNote, testSeed } from '../support/random.js';
import { serverForSuite } from '../support/server.js';
import { tempDirsForSuite } from '../support/temp-dir.js';
import { deliver, inboxItems, signedDelivery, type Answer, type Delivery, type InboxItem } from '../support/webhooks.js';

const SECRET = 'races-test-secret';
const PAIRS = 25;
const IDS = 1000;
const SENDERS = 100;

function delivery(id: string): Delivery {
  return signedDelivery(id, 'race.test', { note: 'the same event, delivered again' }, SECRET);
}

for (const storeKind of ['memory', 'data dir'] as const) {
  describe(`POST /webhooks racing itself (${storeKind} store)`, () => {
    /** Handler runs by event id. */
    const runs = new Map<string, number>();
    const handler = (event: JsonObject): void => {
      const id = String(event['id']);
      runs.set(id, (runs.get(id) ?? 0) + 1);
    };

    const server = serverForSuite(
      () => (storeKind === 'memory' ? { memory: true, webhookSecrets: [SECRET], webhookHandlers: { 'race.test': handler } } : { dataDir: tempDir(), webhookSecrets: [SECRET] }),
      async (server) => {
        // On a data dir, the library's way, after start: events that arrived meanwhile would be parked, not lost.
        if (storeKind === 'data dir') server.webhooks.on('race.test', handler);
      },
    );
    // Made in the server's before(); registered after it, so removed once the server has closed.
    const tempDir = tempDirsForSuite('webhook-races');

    it('should accept exactly one of two simultaneous deliveries of an id and run its handler once', async () => {
      const held: { id: string; release: () => Promise<Answer> }[] = [];
      for (let pair = 0; pair < PAIRS; pair++) {
        const event = delivery(`pair-${pair}`);
        for (let copy = 0; copy < 2; copy++) held.push({ id: event.id, release: await holdDelivery(server.url, event) });
      }
      // Every copy is inside the receiver now, reading its body: let them all finish at once.
      const answers = await Promise.all(held.map(async ({ id, release }) => ({ id, answer: await release() })));

      for (let pair = 0; pair < PAIRS; pair++) {
        const id = `pair-${pair}`;
        const statuses = answers.filter((entry) => entry.id === id).map((entry) => `${entry.answer.status} ${entry.answer.text}`);
        assert.deepEqual(statuses.sort(), ['200 {"status":"accepted"}', '200 {"status":"duplicate"}'], `the two deliveries of ${id}`);
      }
      const ids = answers.map((entry) => entry.id).filter((id, index, all) => all.indexOf(id) === index);
      const items = await waitForProcessed(server.url, ids.length, (id) => id.startsWith('pair-'));
      assert.deepEqual(items.map((item) => [item.id, item.attempts]).sort(), ids.map((id) => [id, 1]).sort());
      assert.deepEqual(ids.filter((id) => runs.get(id) !== 1), [], 'events whose handler did not run exactly once');
    });

    it('should accept each of 1,000 ids once when 100 senders repeat them in random order', async () => {
      const seed = testSeed();
      const random = mulberry32(seed);
      const context = `(${replayNote(seed)}, ${storeKind} store)`;
      // Each id goes to 2-4 different senders; each sender then sends its share in a random order.
      const queues: Delivery[][] = Array.from({ length: SENDERS }, () => []);
      let total = 0;
      for (let n = 0; n < IDS; n++) {
        const event = delivery(`many-${n}`);
        const copies = 2 + Math.floor(random() * 3);
        for (const sender of distinctSenders(random, copies)) queues[sender]?.push(event);
        total += copies;
      }
      for (const queue of queues) shuffle(random, queue);

      const agent = new Agent({ keepAlive: true, maxSockets: SENDERS });
      const answers: { id: string; answer: Answer }[] = [];
      try {
        await Promise.all(
          queues.map(async (queue) => {
            for (const event of queue) answers.push({ id: event.id, answer: await deliver(agent, server.url, event) });
          }),
        );
      } finally {
        agent.destroy();
      }

      assert.equal(answers.length, total, context);
      const other = answers.filter(({ answer }) => answer.status !== 200 || (answer.text !== '{"status":"accepted"}' && answer.text !== '{"status":"duplicate"}'));
      assert.deepEqual(other.slice(0, 5), [], `answers other than 200 accepted/duplicate ${context}`);
      const accepted = new Map<string, number>();
      for (const { id, answer } of answers) if (answer.text === '{"status":"accepted"}') accepted.set(id, (accepted.get(id) ?? 0) + 1);
      const ids = Array.from({ length: IDS }, (_, n) => `many-${n}`);
      assert.deepEqual(ids.filter((id) => accepted.get(id) !== 1), [], `ids not accepted exactly once ${context}`);
      assert.equal(answers.filter(({ answer }) => answer.text === '{"status":"duplicate"}').length, total - IDS, context);

      const items = await waitForProcessed(server.url, IDS, (id) => id.startsWith('many-'), context);
      assert.deepEqual(items.filter((item) => item.attempts !== 1).map((item) => item.id), [], `events run more than one attempt ${context}`);
      assert.deepEqual(ids.filter((id) => runs.get(id) !== 1).map((id) => `${id}: ${runs.get(id) ?? 0} runs`), [], `handlers not run exactly once ${context}`);
    });
  });
}

/**
 * Waits until the inbox holds `expected` items that `mine` picks and every one of them is processed;
 * returns them. Fails at the deadline saying what is left.
 */
async function waitForProcessed(base: string, expected: number, mine: (id: string) => boolean, context = ''): Promise<InboxItem[]> {
  let items: InboxItem[] = [];
  return eventually(
    `${expected} events in the inbox, all processed`,
    async () => {
      items = (await inboxItems(base, context)).filter((item) => mine(item.id));
      return items.length === expected && items.every((item) => item.status === 'processed') && items;
    },
    {
      detail: () => {
        const waiting = items.filter((item) => item.status !== 'processed');
        return `the inbox holds ${items.length} of them, ${waiting.length} not processed: ${JSON.stringify(waiting.slice(0, 3))}`;
      },
      context,
    },
  );
}

/**
 * Starts a delivery whose body arrives in two parts and resolves once the receiver is reading it
 * (Node answers `Expect: 100-continue` just before it hands the request to the application); the
 * returned function sends the rest and resolves with the answer. No sleeping: the 100 is the event.
 */
async function holdDelivery(base: string, event: Delivery): Promise<() => Promise<Answer>> {
  const url = new URL('/webhooks', base);
  const headers = { 'Content-Type': 'application/json', 'X-Signature': event.signature, 'Transfer-Encoding': 'chunked', Expect: '100-continue' };
  const req = httpRequest({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', agent: false, headers });
  const answer = new Promise<Answer>((resolve, reject) => {
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
  });
  const handedOver = new Promise<void>((resolve, reject) => {
    req.once('continue', resolve);
    req.once('error', reject);
  });
  const split = Math.floor(event.body.length / 2);
  req.write(event.body.slice(0, split));
  await handedOver;
  return () => {
    req.end(event.body.slice(split));
    return answer;
  };
}

/** `count` different sender indexes, at random. */
function distinctSenders(random: () => number, count: number): number[] {
  const chosen = new Set<number>();
  while (chosen.size < count) chosen.add(Math.floor(random() * SENDERS));
  return [...chosen];
}

/** Fisher-Yates, driven by the seeded PRNG so a failure can be replayed. */
function shuffle<T>(random: () => number, values: T[]): void {
  for (let index = values.length - 1; index > 0; index--) {
    const other = Math.floor(random() * (index + 1));
    [values[index], values[other]] = [values[other] as T, values[index] as T];
  }
}
