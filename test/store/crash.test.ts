// Crash safety of FileStore (CONVENTIONS.md#durability): a real child process writes under concurrency and is killed
// with SIGKILL at a random moment, 24 times over the same data dir; after each kill the store is
// reopened here and must hold every acknowledged batch, completely, and no batch partially.
// The child's small snapshot threshold puts many kills in the middle of a snapshot or a rotation,
// and early kills land in the middle of recovery. A second run kills the child a moment after it
// starts writing a step of zeros ahead of its journal (lib/store/journal.ts).
// The kill times come from a seeded generator: CRASH_TEST_SEED=<n> replays a run's kill times (the
// child's own pace still varies), and every failure message names the seed it ran with.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { openFileStore } from '../../lib/store/file.js';
import type { Store } from '../../lib/store/types.js';
import { mulberry32 } from '../support/random.js';
import { withTempDir } from '../support/temp-dir.js';

const CHILD = fileURLToPath(new URL('./crash-child.js', import.meta.url));
const ROUNDS = 24;
const ZERO_ROUNDS = 12;
const WRITERS = 8;
const SNAPSHOT_THRESHOLD = 256 << 10;
const SEED = seedFrom(process.env['CRASH_TEST_SEED']);
/** Ends every failure message, so a failing run can be replayed. */
const REPLAY = `CRASH_TEST_SEED=${SEED}`;

/** The seed given in the environment (an integer), or a random one. */
function seedFrom(text: string | undefined): number {
  if (text === undefined || text === '') return Math.floor(Math.random() * 2 ** 32);
  const seed = Number(text);
  if (!Number.isSafeInteger(seed)) throw new TypeError(`CRASH_TEST_SEED must be an integer, not ${JSON.stringify(text)}`);
  return seed >>> 0;
}

interface Round {
  readonly acks: ReadonlyArray<readonly [string, number]>;
  readonly stderr: string;
}

/**
 * Runs the child and kills it with SIGKILL `killAfterMs` after it said it is ready (after spawning
 * when `early`, which lands in start-up and recovery; after it announced its `zeros`th step of zeros
 * ahead of the journal when `zeros` is given); returns what it acknowledged.
 */
function runAndKill(dir: string, run: number, killAfterMs: number, early: boolean, zeros?: { readonly step: number; readonly threshold: number }): Promise<Round> {
  return new Promise((resolve, reject) => {
    const threshold = zeros?.threshold ?? SNAPSHOT_THRESHOLD;
    const args = [CHILD, 'write', dir, String(WRITERS), String(threshold), String(run), ...(zeros === undefined ? [] : ['zeros'])];
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let timer = early ? setTimeout(() => child.kill('SIGKILL'), killAfterMs) : undefined;
    const due = (): boolean =>
      zeros === undefined ? stdout.startsWith('ready') : stdout.split('\nzeros ').length - 1 >= zeros.step;
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      if (timer === undefined && due()) timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => void (stderr += chunk));
    child.on('error', reject);
    child.on('close', (_code, signal) => {
      clearTimeout(timer);
      if (signal !== 'SIGKILL') {
        reject(new Error(`child ended by itself (${signal ?? 'exit'}) in round ${run}: ${stderr} (${REPLAY})`));
        return;
      }
      const acks: Array<[string, number]> = [];
      for (const line of stdout.split('\n')) {
        const [word, batch, parts] = line.split(' ');
        // A line cut by the kill has no parts yet: its batch counts as unacknowledged.
        if (word === 'ack' && batch !== undefined && parts !== undefined && parts !== '') acks.push([batch, Number(parts)]);
      }
      resolve({ acks, stderr });
    });
  });
}

/**
 * After a killed round: its acknowledged batches join `acked`, the store reopens (its error lines
 * collected in `errors`) and must hold every one of them whole.
 */
async function reopenAndVerify(dir: string, round: Round, acked: Map<string, number>, errors: string[], where: string): Promise<void> {
  assert.doesNotMatch(round.stderr, /commit failed|error:/, `${round.stderr} (${where})`);
  for (const [batch, parts] of round.acks) acked.set(batch, parts);
  const opened = await openFileStore({ dir, log: (level, message) => void (level === 'error' && errors.push(message)), progress: () => {} });
  assert.ok(opened.ok, `${opened.ok ? '' : opened.message} (${where})`);
  try {
    verify(opened.store, acked, where);
  } finally {
    await opened.store.close();
  }
}

/** Checks the reopened store; `where` (round, kill time and seed) ends every message. */
function verify(store: Store, acked: ReadonlyMap<string, number>, where: string): void {
  for (const batch of acked.keys()) {
    for (const part of [0, 1]) assert.ok(store.get('rows', `${batch}.${part}`) !== undefined, `acknowledged batch ${batch} lost row ${part} (${where})`);
  }
  const versions = new Map<string, number[]>();
  for (const row of store.scan('rows')) {
    const batch = String(row.doc.batch);
    versions.set(batch, [...(versions.get(batch) ?? []), row.version]);
  }
  for (const [batch, seen] of versions) {
    assert.equal(seen.length, 2, `batch ${batch} is partial: ${seen.length} of 2 rows (${where})`);
    assert.equal(seen[0], seen[1], `batch ${batch} rows come from different commits (${where})`);
  }
  for (const counter of store.scan('counters')) {
    const batch = String(counter.doc.batch);
    assert.deepEqual(versions.get(batch), [counter.version, counter.version], `counter ${counter.id} names batch ${batch}, which is not whole (${where})`);
  }
}

describe('FileStore crash safety', () => {
  it(`should keep every acknowledged batch and no partial one over ${ROUNDS} kill -9 rounds`, (t) =>
    withTempDir('crash', async (dir) => {
      t.diagnostic(REPLAY);
      const random = mulberry32(SEED);
      const acked = new Map<string, number>();
      const errors: string[] = [];
      for (let run = 0; run < ROUNDS; run++) {
        const early = run % 6 === 5;
        const killAfterMs = Math.floor(random() * (early ? 120 : 150));
        const where = `round ${run}, killed ${killAfterMs} ms after ${early ? 'spawning' : 'ready'}, ${REPLAY}`;
        await reopenAndVerify(dir, await runAndKill(dir, run, killAfterMs, early), acked, errors, where);
      }
      assert.deepEqual(errors, [], `the store logged errors on reopening (${REPLAY})`);
      // The rounds must have written something, or the checks above prove nothing.
      assert.ok(acked.size > ROUNDS * 10, `only ${acked.size} batches acknowledged (${REPLAY})`);
    }));

  // Zeros are written ahead of the journal beside the group writes (lib/store/journal.ts): a kill a
  // moment after a step starts lands while its zeros and the groups that overwrite zeros before them
  // are both in flight. A 1 MiB threshold makes steps of 64 KiB, a few a second under this load.
  it(`should keep every acknowledged batch over ${ZERO_ROUNDS} kill -9 rounds while zeros are written ahead of the journal`, (t) =>
    withTempDir('crash-zeros', async (dir) => {
      t.diagnostic(REPLAY);
      const random = mulberry32(SEED);
      const acked = new Map<string, number>();
      const errors: string[] = [];
      for (let run = 0; run < ZERO_ROUNDS; run++) {
        const step = 1 + Math.floor(random() * 3);
        const killAfterMs = Math.floor(random() * 3);
        const where = `round ${run}, killed ${killAfterMs} ms after zeros step ${step}, ${REPLAY}`;
        const round = await runAndKill(dir, run, killAfterMs, false, { step, threshold: 1 << 20 });
        await reopenAndVerify(dir, round, acked, errors, where);
      }
      assert.deepEqual(errors, [], `the store logged errors on reopening (${REPLAY})`);
      assert.ok(acked.size > ZERO_ROUNDS * 10, `only ${acked.size} batches acknowledged (${REPLAY})`);
    }));
});
