// What a durable write with more to do than its body can reach at most (README, Performance,
// `--unavoidable`): a server that does the ideal durable server's group commit (group-commit.ts) and
// then only the work resapi's conventions make unavoidable for the scenario, nothing else (no routing,
// no validation past what the work needs, no state but what it must keep, no index, no metrics). Its
// rate over the ideal durable server's is about the highest ratio a program can reach on the machine
// for that scenario, so a target above it cannot be met; resapi's rate over its own says how much of
// the rest is resapi's.
//
// - `webhook` (CONVENTIONS.md#webhook-signature, #deduplication, #durable-acceptance,
//   #webhook-handlers): the X-Signature compared in constant time with the body's HMAC-SHA256, the body
//   parsed for its id and kind, the id looked up and kept, one record holding the body and the
//   provider's content type made durable before the answer; then a no-op handler runs and its outcome
//   is framed into a later group (nothing waits for it); what is kept of the event for its dedup window
//   (all but the body and fields once processed) goes into the compactions (`Kept`).
// - `delivery` (CONVENTIONS.md#deliveries, #transactional-outbox): the PUT's body parsed and its event
//   made around it (its id, time, the representation's ETag, a sequence, the body as its `resource`:
//   one text, the change and the event in it) and made durable before the answer, so the event's id
//   and bytes survive a crash as the conventions require (with one subscription, the delivery is
//   the event); then those bytes are signed twice (X-Signature, and Standard Webhooks'
//   webhook-signature over id.timestamp.body) and POSTed to the receiver on 16 kept connections,
//   written and read as resapi's poster does (node:http's client cost 30–45 µs more a delivery here,
//   measured); each outcome is framed into a later group. Each item's last body, each event not yet
//   delivered and each delivery's outcome go into the compactions. `GET` tells how many deliveries
//   are left, so a round waits for them as it waits for resapi's.
//
// Each starts holding the scenario's items (the bench's own, as resapi's store is seeded), as if its
// last compaction had written them, so that at 1,000,000 items its compactions are as large as resapi's
// snapshots. They write every kept text again, where resapi's snapshots copy unchanged frames: at
// that size this is the simplest program, not the best one, and its ratio is no limit.
//
// Run as a process of its own: `node unavoidable.js webhook|delivery ANSWER.json FILE SECRET RECEIVER
// ITEMS` prints `listening on URL`; `GET` (any path) answers its totals as JSON.
import { closeSync, fdatasync, openSync, renameSync, write } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import { createHmac, createSecretKey, randomUUID, timingSafeEqual, type KeyObject } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { strongEtag } from '../../../lib/protocol/etag.js';
import { benchItem, itemId, spawnModule, type Child } from '../servers.js';
import { readAnswers, writeAnswers, type Answer } from './answers.js';
import { GroupCommit, type GroupTotals } from './group-commit.js';
import { answerTotals, limitTotals, listenOnLoopback, readBody } from './limit-server.js';

const SELF = fileURLToPath(import.meta.url);
/** resapi's default `outbox.inFlight`. */
const IN_FLIGHT = 16;
const DIGEST_HEX_LENGTH = 64;
/** The journal's growth that starts a compaction at the least: resapi's default snapshot threshold. */
const COMPACT_AT = 64 << 20;
/** A compaction's write, at most. */
const COMPACT_PIECE = 1 << 20;

export type UnavoidableKind = 'webhook' | 'delivery';

export interface UnavoidableTotals extends GroupTotals {
  /** Deliveries made durable and not yet answered by the receiver (`delivery`; 0 for `webhook`). */
  readonly pending: number;
}

/**
 * Starts the server of `kind` answering `answer`, appending to `journal`, holding the bench's first
 * `items` items; `receiver` takes the deliveries.
 */
export function spawnUnavoidable(
  kind: UnavoidableKind,
  answer: Answer,
  answerFile: string,
  journal: string,
  secret: string,
  receiver: URL,
  items: number,
): Promise<Child> {
  writeAnswers(answerFile, new Map([['', answer]]));
  return spawnModule(SELF, [kind, answerFile, journal, secret, receiver.href, String(items)]);
}

export function unavoidableTotals(url: URL): Promise<UnavoidableTotals> {
  return limitTotals<UnavoidableTotals>(url);
}

function serve(
  kind: UnavoidableKind,
  answerFile: string,
  journal: string,
  secret: string,
  receiver: URL,
  items: number,
): void {
  const answer = readAnswers(answerFile).get('') as Answer;
  const group = new GroupCommit(journal);
  const key = createSecretKey(Buffer.from(secret));
  const kept = new Kept(group, `${journal}.compacted`);
  for (let n = 0; n < items; n++) kept.seed(itemId(n), JSON.stringify(benchItem(n)));
  const accept = kind === 'webhook' ? webhookAccept(group, key, kept) : deliveryAccept(group, key, receiver, kept);
  const server = createServer((request, response) => {
    if (request.method === 'GET') {
      answerTotals(response, { ...group.totals, pending: accept.pending() });
      return;
    }
    readBody(request, (body) => {
      const refused = accept.take(body, request.headers, () => {
        response.writeHead(answer.status, answer.reason, answer.fields as string[]);
        response.end(answer.body);
      });
      if (refused !== undefined) response.writeHead(refused, { 'Content-Length': 0 }).end();
    });
  });
  listenOnLoopback(server);
}

interface Accept {
  /** Takes one request's body: a status to answer at once, or undefined once `answer` will run when durable. */
  take(body: Buffer, headers: IncomingMessage['headers'], answer: () => void): number | undefined;
  pending(): number;
}

/**
 * What the server must keep, by id, as the text its next compaction writes. A durable store that must
 * recover in bounded time cannot let its journal grow without end (CONVENTIONS.md#durability): once
 * the journal has grown by max(64 MiB, a quarter of the last compaction), as resapi's trigger, every
 * kept text is written to a new file (made durable, then renamed over the last), in pieces of at most
 * 1 MiB or 1 ms of the main thread, the turn given back between them.
 */
class Kept {
  private readonly texts = new Map<string, string>();
  private compacted = 0;
  private journalAtLast = 0;
  private compacting = false;

  constructor(
    private readonly group: GroupCommit,
    private readonly path: string,
  ) {}

  /** Holds `text` as if the last compaction had written it (the items resapi's store starts with). */
  seed(id: string, text: string): void {
    this.texts.set(id, text);
    this.compacted += text.length + 1;
  }

  has(id: string): boolean {
    return this.texts.has(id);
  }

  set(id: string, text: string): void {
    this.texts.set(id, text);
    if (!this.compacting && this.group.bytes - this.journalAtLast >= Math.max(COMPACT_AT, this.compacted / 4)) this.compact();
  }

  private compact(): void {
    this.compacting = true;
    this.journalAtLast = this.group.bytes;
    const texts = Array.from(this.texts.values());
    const fd = openSync(`${this.path}.tmp`, 'w');
    let at = 0;
    let written = 0;
    const piece = (): void => {
      const started = performance.now();
      const lines: string[] = [];
      let bytes = 0;
      while (at < texts.length && bytes < COMPACT_PIECE && performance.now() - started < 1) {
        const text = texts[at++] as string;
        lines.push(text);
        bytes += text.length + 1;
      }
      const chunk = Buffer.from(`${lines.join('\n')}\n`);
      write(fd, chunk, 0, chunk.length, written, (error) => {
        if (error !== null) throw error;
        written += chunk.length;
        if (at < texts.length) {
          setImmediate(piece);
          return;
        }
        fdatasync(fd, (syncError) => {
          if (syncError !== null) throw syncError;
          closeSync(fd);
          renameSync(`${this.path}.tmp`, this.path);
          this.compacted = written;
          this.compacting = false;
        });
      });
    };
    piece();
  }
}

function webhookAccept(group: GroupCommit, key: KeyObject, kept: Kept): Accept {
  const handler = async (_event: unknown): Promise<void> => {};
  return {
    take(body, headers, answer) {
      const presented = String(headers['x-signature']);
      if (presented.length !== DIGEST_HEX_LENGTH) return 401;
      const digest = Buffer.from(presented, 'hex');
      const expected = createHmac('sha256', key).update(body).digest();
      if (digest.length !== expected.length || !timingSafeEqual(digest, expected)) return 401;
      const text = body.toString('utf8');
      const event = JSON.parse(text) as { id: string; event: string };
      if (kept.has(event.id)) return 200;
      // Written as the shortest JSON that says it: strings escaped by JSON.stringify, times as numbers.
      const receivedAt = Date.now();
      const head = `{"id":${JSON.stringify(event.id)},"event":${JSON.stringify(event.event)}`;
      const fields = `{"content-type":${JSON.stringify(headers['content-type'] ?? '')}}`;
      const record =
        `${head},"status":"accepted","receivedAt":${receivedAt},"body":${JSON.stringify(text)},"headers":${fields}}`;
      kept.set(event.id, record);
      group.append(Buffer.from(record), () => {
        answer();
        void handler(event).then(() => {
          // Processed: the body and the fields are dropped, the rest kept for the dedup window.
          const processed = `${head},"status":"processed","receivedAt":${receivedAt},"processedAt":${Date.now()}}`;
          kept.set(event.id, processed);
          group.append(Buffer.from(processed));
        });
      });
      return undefined;
    },
    pending: () => 0,
  };
}

/**
 * The deliveries' client, as lean as resapi's poster (lib/webhooks/post.ts): HTTP/1.1 written as text in
 * one write on one of IN_FLIGHT kept connections, and the answer's head read until its Content-Length
 * of body has passed (the bench's receiver always sends one; anything else is not looked for here).
 */
class Connection {
  private received = '';
  private onAnswer: (() => void) | undefined;
  private readonly socket: Socket;

  constructor(receiver: URL) {
    this.socket = connect(Number(receiver.port), receiver.hostname);
    this.socket.setNoDelay(true);
    this.socket.setEncoding('latin1');
    this.socket.on('data', (chunk: string) => this.read(chunk));
    this.socket.on('error', (error) => {
      throw error;
    });
  }

  post(request: string, answered: () => void): void {
    this.onAnswer = answered;
    this.socket.write(request);
  }

  private read(chunk: string): void {
    this.received += chunk;
    const headEnd = this.received.indexOf('\r\n\r\n');
    if (headEnd === -1) return;
    const length = /\r\ncontent-length: *(\d+)/i.exec(this.received.slice(0, headEnd))?.[1] ?? '0';
    if (this.received.length < headEnd + 4 + Number(length)) return;
    this.received = '';
    const answered = this.onAnswer;
    this.onAnswer = undefined;
    answered?.();
  }
}

/** An event made durable and waiting for its POST: the item it announces, its id and its bytes. */
interface DueEvent {
  readonly id: string;
  readonly eventId: string;
  readonly body: string;
}

function deliveryAccept(group: GroupCommit, key: KeyObject, receiver: URL, kept: Kept): Accept {
  const idle = Array.from({ length: IN_FLIGHT }, () => new Connection(receiver));
  const due: DueEvent[] = [];
  let pending = 0;
  let sequence = 0;
  const deliver = (): void => {
    while (idle.length > 0 && due.length > 0) {
      const { id, eventId, body } = due.shift() as DueEvent;
      const connection = idle.pop() as Connection;
      const timestamp = String(Math.floor(Date.now() / 1000));
      const signature = createHmac('sha256', key).update(body).digest('hex');
      const standard = createHmac('sha256', key).update(`${eventId}.${timestamp}.${body}`).digest('base64');
      const request =
        `POST ${receiver.pathname} HTTP/1.1\r\nHost: ${receiver.host}\r\nContent-Type: application/json\r\n` +
        `X-Signature: ${signature}\r\nX-Timestamp: ${timestamp}\r\nwebhook-id: ${eventId}\r\n` +
        `webhook-timestamp: ${timestamp}\r\nwebhook-signature: v1,${standard}\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: keep-alive\r\n\r\n${body}`;
      connection.post(request, () => {
        pending--;
        const outcome = `{"id":"${eventId}","item":${JSON.stringify(id)},"status":200,"at":${Date.now()}}`;
        kept.set(eventId, outcome);
        group.append(Buffer.from(outcome));
        idle.push(connection);
        deliver();
      });
    }
  };
  return {
    take(body, _headers, answer) {
      const text = body.toString('utf8');
      const { id } = JSON.parse(text) as { id: string };
      const eventId = randomUUID();
      // The body is the item's JSON representation as sent, so it goes into the event as it is.
      const etag = JSON.stringify(strongEtag(body));
      const occurredAt = new Date().toISOString();
      const event =
        `{"id":"${eventId}","event":"items.replaced","type":"items.replaced","occurredAt":"${occurredAt}",` +
        `"data":{"collection":"items","id":${JSON.stringify(id)},"etag":${etag},"sequence":${++sequence},` +
        `"resource":${text}}}`;
      kept.set(id, text);
      kept.set(eventId, event);
      pending++;
      group.append(Buffer.from(event), () => {
        answer();
        due.push({ id, eventId, body: event });
        deliver();
      });
      return undefined;
    },
    pending: () => pending,
  };
}

if (process.argv[1] === SELF) {
  const [kind, answerFile, journal, secret, receiver, items] = process.argv.slice(2);
  if (kind !== 'webhook' && kind !== 'delivery') {
    throw new Error('usage: unavoidable.js webhook|delivery ANSWER.json FILE SECRET RECEIVER ITEMS');
  }
  serve(kind, answerFile ?? '', journal ?? '', secret ?? '', new URL(receiver ?? ''), Number(items ?? 0));
}
