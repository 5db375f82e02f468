// End to end: a first-time user of the real binary, possibly coming from json-server. Help that
// describes every flag; a wrong first guess (`resapi serve db.json`, a port in use, a key with odd
// characters) answered with what to do instead; a refused start leaves no data dir behind; a seed that
// is not loaded says why; json-server's own example db.json starts (CONVENTIONS.md#command-line;
// README, Running it).
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { runBinary, startBinary } from '../support/binary.js';
import { create, request } from '../support/http.js';
import { tempDirsForSuite } from '../support/temp-dir.js';

/** json-server's README example: two collections and a singular resource. */
const JSON_SERVER_DB = {
  posts: [{ id: '1', title: 'a title', views: 100 }, { id: '2', title: 'another title', views: 200 }],
  comments: [{ id: '1', text: 'a comment about post 1', postId: '1' }],
  profile: { name: 'typicode' },
};

describe('resapi for a first-time user', () => {
  const tempDir = tempDirsForSuite('first-run');
  let dir = '';
  before(() => {
    dir = tempDir();
  });

  it('should describe every serve flag in `resapi serve --help`, and point to it from `resapi --help`', async () => {
    const serveHelp = await runBinary(['serve', '--help']);
    assert.equal(serveHelp.code, 0);
    for (const flag of ['--host', '--port', '--data-dir', '--memory', '--seed', '--config', '--base-url', '--no-cache-mode', '--handlers']) {
      assert.match(serveHelp.stdout, new RegExp(`^  ${flag} `, 'm'), flag);
    }
    const help = await runBinary(['--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /resapi serve --help/);
  });

  it('should suggest --seed to someone who starts it as json-server is started', async () => {
    const result = await runBinary(['serve', 'db.json']);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /use --seed db\.json/);
  });

  it('should refuse a port in use, suggest --port 0, and create no data dir', async () => {
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as { port: number }).port;
    const dataDir = join(dir, 'never-created');
    try {
      const result = await runBinary(['serve', '--port', String(port), '--data-dir', dataDir]);
      assert.equal(result.code, 1);
      assert.match(result.stderr, /in use/);
      assert.match(result.stderr, /--port 0/);
      assert.equal(existsSync(dataDir), false);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  it('should refuse a bad seed for a new store without creating its data dir', async () => {
    const seed = join(dir, 'bad-seed');
    await writeFile(`${seed}.json`, '{"things": [{"id": "a"}, "not an object"]}');
    const dataDir = join(dir, 'also-never-created');
    const result = await runBinary(['serve', '--port', '0', '--data-dir', dataDir, '--seed', `${seed}.json`]);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /things\[1\] is not an object/);
    assert.equal(existsSync(dataDir), false);
  });

  it("should start from json-server's example db.json, saying what it skipped", async () => {
    const db = join(dir, 'db.json');
    await writeFile(db, JSON.stringify(JSON_SERVER_DB));
    const server = await startBinary(['--memory', '--seed', db]);
    try {
      assert.equal((await request(server.url, '/posts/2')).status, 200);
      assert.equal((await request(server.url, '/comments/1')).status, 200);
      assert.match(server.stderr(), /'profile' is not an array of items/);
    } finally {
      await server.stop();
    }
  });

  it('should say so when a seed is not loaded because the store already holds data', async () => {
    const dataDir = join(dir, 'seeded-once');
    const seed = join(dir, 'seed-folder');
    await mkdir(seed);
    await writeFile(join(seed, 'notes.json'), JSON.stringify([{ id: 'n1' }]));
    const first = await startBinary(['--data-dir', dataDir, '--seed', seed]);
    assert.equal((await create(first.url, '/notes/mine', {})).status, 201);
    await first.stop();
    const second = await startBinary(['--data-dir', dataDir, '--seed', seed]);
    try {
      assert.match(second.stderr(), /seed not loaded: the store was seeded before/);
    } finally {
      await second.stop();
    }
  });

  it('should answer GET /$health without an API key, and only it (probes carry none)', async () => {
    const server = await startBinary(['--memory'], { RESAPI_API_KEYS: 'k1' });
    try {
      assert.equal((await request(server.url, '/$health')).status, 200);
      assert.equal((await request(server.url, '/')).status, 401);
    } finally {
      await server.stop();
    }
  });

  it('should refuse to start with an API key that cannot travel in a Bearer header, naming the rule and not the key', async () => {
    const result = await runBinary(['serve', '--memory', '--port', '0'], { RESAPI_API_KEYS: 'good-key,pa$$w0rd!' });
    assert.equal(result.code, 1);
    assert.match(result.stderr, /RFC 6750 token68/);
    assert.doesNotMatch(result.stderr, /pa\$\$w0rd/);
  });
});
