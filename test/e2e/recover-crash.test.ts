// A recover killed halfway (CONVENTIONS.md#recovering-after-an-outage, CONVENTIONS.md#durability): a
// data dir holds more dead inbox events than one `POST /$inbox/$recover` takes; a child process
// serving it kills itself with SIGKILL between two of the recover's batches (after a seeded random
// number of them). Reopened, the store holds every event exactly once, each either queued again
// (from attempt 1) or still dead as it was, the ones queued again being the earliest of the window;
// nothing outside the window moved. Repeats of the request then take the rest, the limit of one
// request showing in `remaining`, and a last repeat finds nothing left.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WINDOW_BATCH as BATCH, WINDOW_LIMIT } from '../../lib/jobs/queue.js';
import type { JsonObject } from '../../lib/json.js';
import { silentLogger } from '../../lib/log.js';
import { openFileStore } from '../../lib/store/file.js';
import type { Mutation, Store } from '../../lib/store/types.js';
import { INBOX_SPACE } from '../../lib/webhooks/inbox.js';
import { JSON_HEADERS, request } from '../support/http.js';
import { mulberry32, replayNote, testSeed } from '../support/random.js';
import { withServer } from '../support/server.js';
import { tempDirsForSuite } from '../support/temp-dir.js';

const CHILD = fileURLToPath(new URL('./recover-crash-child.js', import.meta.url));
const BODY_SPACE = '$inbox-bodies';
/** Dead events in the window: more than one request takes. */
const IN_WINDOW = WINDOW_LIMIT + 2000;
/** Dead events received before the window, which no recover of it may touch. */
const BEFORE_WINDOW = 200;
const tempDir = tempDirsForSuite('recover-crash');

interface Seeded {
  readonly since: number;
  /** The window's events in the order a recover takes them: time, then id. */
  readonly window: readonly string[];
  readonly before: readonly string[];
}

/** Writes the dead events straight into a new data dir, as the inbox leaves them after their last attempt. */
async function seed(dir: string, random: () => number): Promise<Seeded> {
  const opened = await openFileStore({ dir, log: silentLogger, progress: () => {} });
  assert.ok(opened.ok, 'the data dir opens');
  const since = Date.now() - 3600_000;
  const events: { id: string; at: number }[] = [];
  // Three events per millisecond, ids in no relation to their times.
  for (let n = 0; n < IN_WINDOW; n++) events.push({ id: `evt-${Math.floor(random() * 1e9)}-${n}`, at: since + Math.floor(n / 3) });
  for (let n = 0; n < BEFORE_WINDOW; n++) events.push({ id: `old-${n}`, at: since - 600_000 + n });
  try {
    for (let start = 0; start < events.length; start += 2000) {
      const mutations: Mutation[] = events.slice(start, start + 2000).flatMap(({ id, at }) => [
        { kind: 'put', collection: INBOX_SPACE, id, doc: deadItem(id, at) },
        { kind: 'put', collection: BODY_SPACE, id, doc: { body: JSON.stringify({ id, event: 'order.created' }) } },
      ]);
      assert.equal((await opened.store.commit({ mutations })).ok, true);
    }
  } finally {
    await opened.store.close();
  }
  const inWindow = events.filter((event) => event.at >= since).sort((a, b) => a.at - b.at || (a.id < b.id ? -1 : 1));
  return { since, window: inWindow.map((event) => event.id), before: events.filter((event) => event.at < since).map((event) => event.id) };
}

function deadItem(id: string, at: number): JsonObject {
  return { id, event: 'order.created', status: 'dead', attempts: 8, receivedAt: new Date(at).toISOString(), lastError: 'Error: down' };
}

/** Serves the data dir in a child, sends the recover, and waits for the child's kill -9. */
async function recoverUntilKilled(dir: string, body: string, killAfter: number, context: string): Promise<void> {
  const child = spawn(process.execPath, [CHILD, dir, String(killAfter)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => void (stderr += chunk));
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      const match = /^listening (\S+)\n/.exec(out);
      if (match !== null) resolve(match[1] as string);
    });
    void exited.then(([code, signal]) => reject(new Error(`the child exited (${code ?? signal}) before listening: ${stderr} ${context}`)));
  });
  // The child dies in the middle of its answer: the request fails, or (had it finished) says so.
  const answer = await request(url, '/$inbox/$recover', { method: 'POST', headers: JSON_HEADERS, body }).then(
    (res) => `${res.status} ${res.text}`,
    () => 'no answer',
  );
  const [code, signal] = await exited;
  assert.equal(signal, 'SIGKILL', `the child ended with ${code ?? signal} (answer: ${answer}): ${stderr} ${context}`);
}

/** Every seeded event exactly once with its body; each queued again or still as seeded. Returns those queued again. */
function verify(store: Store, seeded: Seeded, context: string): Set<string> {
  const all = [...seeded.window, ...seeded.before];
  const items = store.scan(INBOX_SPACE);
  assert.equal(items.length, all.length, `events in the inbox ${context}`);
  assert.deepEqual(items.map((item) => item.id).sort(), [...all].sort(), `the inbox holds exactly the seeded events ${context}`);
  assert.equal(store.count(BODY_SPACE), all.length, `every event keeps its body ${context}`);
  const queued = new Set<string>();
  for (const item of items) {
    const { status, attempts, lastError } = item.doc;
    if (status === 'accepted') {
      assert.equal(attempts, 0, `${item.id} queued again starts from attempt 1 ${context}`);
      assert.equal(lastError, undefined, `${item.id} ${context}`);
      queued.add(item.id);
    } else {
      assert.deepEqual(item.doc, deadItem(item.id, Date.parse(String(item.doc['receivedAt']))), `${item.id} is still dead as it was ${context}`);
    }
  }
  assert.deepEqual(seeded.before.filter((id) => queued.has(id)), [], `events before the window queued ${context}`);
  return queued;
}

describe('POST /$inbox/$recover under kill -9', () => {
  it('should leave every event either queued again or still dead, the earliest first, and finish on a repeat', { timeout: 120_000 }, async () => {
    const seedValue = testSeed();
    const random = mulberry32(seedValue);
    const dir = join(tempDir(), 'data');
    const seeded = await seed(dir, random);
    const batches = WINDOW_LIMIT / BATCH;
    const killAfter = 1 + Math.floor(random() * (batches - 1));
    const context = `(${replayNote(seedValue)}, killed at batch ${killAfter} of ${batches})`;
    const body = JSON.stringify({ since: new Date(seeded.since).toISOString() });

    await recoverUntilKilled(dir, body, killAfter, context);
    const reopened = await openFileStore({ dir, log: silentLogger, progress: () => {} });
    assert.ok(reopened.ok, `the data dir reopens ${context}`);
    let queued: Set<string>;
    try {
      queued = verify(reopened.store, seeded, context);
    } finally {
      await reopened.store.close();
    }
    // Batches are written in order, each whole or not at all: what was queued is the window's start.
    assert.deepEqual(seeded.window.slice(0, queued.size).filter((id) => !queued.has(id)), [], `queued again, but not the earliest ${context}`);
    assert.ok(queued.size % BATCH === 0, `a batch written in part: ${queued.size} queued ${context}`);
    assert.ok(queued.size >= (killAfter - 1) * BATCH && queued.size <= killAfter * BATCH, `${queued.size} queued ${context}`);

    await withServer({ dataDir: dir }, async (server) => {
      const left = IN_WINDOW - queued.size;
      const post = async (): Promise<unknown> => {
        const res = await request(server.url, '/$inbox/$recover', { method: 'POST', headers: JSON_HEADERS, body });
        assert.equal(res.status, 202, `${res.text} ${context}`);
        return res.json();
      };
      const first = Math.min(left, WINDOW_LIMIT);
      assert.deepEqual(await post(), { requeued: first, remaining: left - first }, context);
      assert.deepEqual(await post(), { requeued: left - first, remaining: 0 }, context);
      assert.deepEqual(await post(), { requeued: 0, remaining: 0 }, context);
      const all = verify(server.store, seeded, context);
      assert.equal(all.size, IN_WINDOW, `every event of the window queued again ${context}`);
    });
  });
});
