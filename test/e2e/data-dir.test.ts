// End to end: the data directory of the real binary (CONVENTIONS.md#data-directory).
//
// - Everything resapi creates is its owner's alone: directories 0700, files 0600, whatever the umask
//   (the journal holds subscription secrets, dead letters hold received bodies).
// - An existing data dir that others may enter is narrowed to its owner, and the log says so.
// - A restart right after `kill -9` starts, even while the killed holder is still a zombie (dead,
//   not yet reaped by its parent): the zombie is made here on purpose by a parent that never waits.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { webhookSignature } from '../../lib/protocol/signature.js';
import { BIN, REPO, startBinary } from '../support/binary.js';
import { eventually } from '../support/eventually.js';
import { create, request } from '../support/http.js';
import { tempDirsForSuite } from '../support/temp-dir.js';

const SECRET = 'data-dir-test-secret';
const tempDir = tempDirsForSuite('data-dir');

/** Every path under `root` with its permission bits, as `path mode` lines (octal), sorted. */
function modesUnder(root: string): string[] {
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      const info = statSync(path);
      found.push(`${path.slice(root.length)} ${(info.mode & 0o777).toString(8)}`);
      if (info.isDirectory()) walk(path);
    }
  };
  walk(root);
  return found.sort();
}

/** `/proc/<pid>/stat`'s state letter (Z for a zombie), or undefined once the process is gone. */
function processState(pid: number): string | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2, text.lastIndexOf(')') + 3);
  } catch {
    return undefined;
  }
}

describe('the data directory', () => {
  it('should create its folders 0700 and its files 0600 even under umask 000', async () => {
    const root = tempDir();
    const dataDir = join(root, 'nested', 'store');
    const handlers = join(root, 'handlers.mjs');
    writeFileSync(handlers, "export default { '*': async () => { throw new Error('always fails'); } };\n");
    const config = join(root, 'config.json');
    writeFileSync(config, JSON.stringify({ webhooks: { retry: { attempts: 1 } } }));
    const previous = process.umask(0o000);
    let server;
    try {
      server = await startBinary(['--data-dir', dataDir, '--handlers', handlers, '--config', config], {
        RESAPI_WEBHOOK_SECRETS: SECRET,
      });
    } finally {
      process.umask(previous);
    }
    try {
      assert.equal((await create(server.url, '/notes/n1', { text: 'journaled' })).status, 201);
      // An event whose handler always fails is dead after its one attempt: a line in dead-letter.jsonl.
      const body = JSON.stringify({ id: 'evt-dead', event: 'order.created' });
      const headers = { 'Content-Type': 'application/json', 'X-Signature': webhookSignature(body, SECRET) };
      assert.equal((await request(server.url, '/webhooks', { method: 'POST', headers, body })).status, 200);
      await eventually('the event to be dead', async () => {
        const res = await request(server.url, '/$inbox/evt-dead');
        return (res.json() as { status?: string }).status === 'dead';
      });
      await eventually('dead-letter.jsonl', () => readdirSync(dataDir).includes('dead-letter.jsonl'));
      // Looked at while the server runs: the lock exists only then.
      const modes = modesUnder(join(root, 'nested'));
      for (const name of ['/store', '/store/lock', '/store/dead-letter.jsonl']) {
        assert.ok(modes.some((line) => line.startsWith(`${name} `)), `${name} in ${modes.join(', ')}`);
      }
      assert.ok(modes.some((line) => /^\/store\/journal-\d+\.log /.test(line)), modes.join(', '));
      for (const line of modes) {
        const [path, mode] = line.split(' ') as [string, string];
        const expected = statSync(join(root, 'nested', path)).isDirectory() ? '700' : '600';
        assert.equal(mode, expected, `${path}: ${modes.join(', ')}`);
      }
    } finally {
      assert.equal(await server.stop(), 0);
    }
  });

  it('should narrow an existing data dir that others may enter to its owner, and say so', async () => {
    const dataDir = join(tempDir(), 'store');
    mkdirSync(dataDir);
    chmodSync(dataDir, 0o755);
    const server = await startBinary(['--data-dir', dataDir]);
    assert.equal(await server.stop(), 0);
    assert.equal((statSync(dataDir).mode & 0o777).toString(8), '700');
    const lines = server.stderr().split('\n').filter((line) => /narrow/.test(line));
    assert.equal(lines.length, 1, server.stderr());
    assert.match(lines[0] as string, /0755.*0700/);
  });

  it('should leave an existing data dir that only its owner may enter as it is', async () => {
    const dataDir = join(tempDir(), 'store');
    mkdirSync(dataDir);
    chmodSync(dataDir, 0o700);
    const server = await startBinary(['--data-dir', dataDir]);
    assert.equal(await server.stop(), 0);
    assert.equal((statSync(dataDir).mode & 0o777).toString(8), '700');
    assert.doesNotMatch(server.stderr(), /narrow/);
  });
});

describe('a restart right after kill -9', () => {
  const linuxOnly = process.platform === 'linux' ? {} : { skip: 'zombies are seen through /proc' };

  it('should start while the killed holder is still a zombie, and say whose lock it took over', linuxOnly, async () => {
    const dir = tempDir();
    // The shell starts resapi in the background, prints its pid, then becomes `sleep`, which never
    // waits for children: once killed, resapi stays a zombie until `sleep` ends.
    const script = `"${process.execPath}" "${BIN}" serve --port 0 --data-dir "${dir}" & echo "pid $!"; exec sleep 600`;
    const parent: ChildProcess = spawn('/bin/sh', ['-c', script], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    parent.stdout?.setEncoding('utf8').on('data', (chunk: string) => void (out += chunk));
    try {
      const pid = Number(
        await eventually('the pid and the listening line', () => {
          const match = /^pid (\d+)$/m.exec(out);
          return match !== null && /^listening on /m.test(out) ? match[1] : undefined;
        }),
      );
      // Killed only once the shell is `sleep`: the shell itself would reap its background job.
      await eventually('the shell to become sleep', () => readFileSync(`/proc/${parent.pid}/comm`, 'utf8').trim() === 'sleep');
      process.kill(pid, 'SIGKILL');
      await eventually('the killed server to be a zombie', () => processState(pid) === 'Z', {
        detail: () => `state ${processState(pid)}`,
      });
      const restarted = await startBinary(['--data-dir', dir]);
      try {
        assert.equal((await request(restarted.url, '/$health')).status, 200);
        assert.equal(processState(pid), 'Z', 'the holder must still be a zombie during the restart');
      } finally {
        assert.equal(await restarted.stop(), 0);
      }
      const took = restarted.stderr().split('\n').filter((line) => /took over a lock/.test(line));
      assert.equal(took.length, 1, restarted.stderr());
      assert.match(took[0] as string, new RegExp(`"pid":${pid}\\b`));
      assert.match(took[0] as string, /zombie/);
    } finally {
      parent.kill('SIGKILL');
      if (parent.exitCode === null && parent.signalCode === null) await once(parent, 'exit');
    }
  });
});
