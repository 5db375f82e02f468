// Crash safety of FileStore (README, Durability): a real child process writes under concurrency and is killed
// with SIGKILL at a random moment, 24 times over the same data dir; after each kill the store is
// reopened here and must hold every acknowledged batch, completely, and no batch partially.
// The child's small snapshot threshold puts many kills in the middle of a snapshot or a rotation,
// and early kills land in the middle of recovery.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openFileStore } from '../../lib/store/file.js';
import type { Store } from '../../lib/store/types.js';

const CHILD = fileURLToPath(new URL('./crash-child.js', import.meta.url));
const ROUNDS = 24;
const WRITERS = 8;
const SNAPSHOT_THRESHOLD = 256 << 10;

interface Round {
  readonly acks: ReadonlyArray<readonly [string, number]>;
  readonly stderr: string;
}

/**
 * Runs the child and kills it with SIGKILL `killAfterMs` after it said it is ready (after spawning
 * when `early`, which lands in start-up and recovery); returns what it acknowledged.
 */
function runAndKill(dir: string, run: number, killAfterMs: number, early: boolean): Promise<Round> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CHILD, 'write', dir, String(WRITERS), String(SNAPSHOT_THRESHOLD), String(run)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let timer = early ? setTimeout(() => child.kill('SIGKILL'), killAfterMs) : undefined;
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      if (timer === undefined && stdout.startsWith('ready')) timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => void (stderr += chunk));
    child.on('error', reject);
    child.on('close', (_code, signal) => {
      clearTimeout(timer);
      if (signal !== 'SIGKILL') {
        reject(new Error(`child ended by itself (${signal ?? 'exit'}): ${stderr}`));
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

function verify(store: Store, acked: ReadonlyMap<string, number>): void {
  for (const batch of acked.keys()) {
    for (const part of [0, 1]) assert.ok(store.get('rows', `${batch}.${part}`) !== undefined, `acknowledged batch ${batch} lost row ${part}`);
  }
  const versions = new Map<string, number[]>();
  for (const row of store.scan('rows')) {
    const batch = String(row.doc.batch);
    versions.set(batch, [...(versions.get(batch) ?? []), row.version]);
  }
  for (const [batch, seen] of versions) {
    assert.equal(seen.length, 2, `batch ${batch} is partial: ${seen.length} of 2 rows`);
    assert.equal(seen[0], seen[1], `batch ${batch} rows come from different commits`);
  }
  for (const counter of store.scan('counters')) {
    const batch = String(counter.doc.batch);
    assert.deepEqual(versions.get(batch), [counter.version, counter.version], `counter ${counter.id} names batch ${batch}, which is not whole`);
  }
}

describe('FileStore crash safety', () => {
  it(`should keep every acknowledged batch and no partial one over ${ROUNDS} kill -9 rounds`, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'resapi-crash-'));
    const acked = new Map<string, number>();
    const errors: string[] = [];
    try {
      for (let run = 0; run < ROUNDS; run++) {
        const early = run % 6 === 5;
        const round = await runAndKill(dir, run, Math.floor(Math.random() * (early ? 120 : 150)), early);
        assert.doesNotMatch(round.stderr, /commit failed|error:/, round.stderr);
        for (const [batch, parts] of round.acks) acked.set(batch, parts);
        const opened = await openFileStore({ dir, log: (level, message) => void (level === 'error' && errors.push(message)), progress: () => {} });
        assert.ok(opened.ok, opened.ok ? '' : opened.message);
        try {
          verify(opened.store, acked);
        } finally {
          await opened.store.close();
        }
      }
      assert.deepEqual(errors, []);
      // The rounds must have written something, or the checks above prove nothing.
      assert.ok(acked.size > ROUNDS * 10, `only ${acked.size} batches acknowledged`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
