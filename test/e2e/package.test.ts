// The package as a user installs it (README, Using resapi from code; CONVENTIONS.md#embedding): `npm pack`
// of this repository holds the compiled library with its type declarations, bin/ and the README,
// nothing else; installed from the tarball into a fresh project with no network, `import { start }
// from 'resapi'` and `import { ResourceClient } from 'resapi/client'` work, a TypeScript consumer
// type-checks against the declarations, `npx resapi serve --port 0` serves, and the README's
// examples (the blocks marked `<!-- example: FILE -->`) run there as written.
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO } from '../support/binary.js';
import { tempDirsForSuite } from '../support/temp-dir.js';

const run = promisify(execFile);
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const NPX = process.platform === 'win32' ? 'npx.cmd' : 'npx';
/** No network, no audit or funding calls, no update notice: an install that needs the registry fails. */
const OFFLINE = { ...process.env, npm_config_offline: 'true', npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' };

interface PackedFile {
  readonly path: string;
}

const tempDir = tempDirsForSuite('package');
let project = '';
let packed: readonly string[] = [];

before(async () => {
  const folder = tempDir();
  project = join(folder, 'consumer');
  // --ignore-scripts: the build the suite runs from is the one packed (prepare would rebuild it under the running tests).
  const { stdout } = await run(NPM, ['pack', '--json', '--ignore-scripts', '--pack-destination', folder], { cwd: REPO, env: OFFLINE, maxBuffer: 16 * 1024 * 1024 });
  const [manifest] = JSON.parse(stdout) as [{ filename: string; files: PackedFile[] }];
  packed = manifest.files.map((file) => file.path);
  mkdirSync(project);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true, type: 'module' }));
  await run(NPM, ['install', '--no-save', join(folder, manifest.filename)], { cwd: project, env: OFFLINE });
});

describe('the packed package', () => {
  it('should hold the compiled library, its declarations, bin/, the README and the conventions, and nothing else', () => {
    for (const needed of ['package.json', 'README.md', 'CONVENTIONS.md', 'bin/resapi.js', 'build/lib/index.js', 'build/lib/index.d.ts', 'build/lib/client/index.js', 'build/lib/client/index.d.ts', 'build/lib/cli/main.js']) {
      assert.ok(packed.includes(needed), `${needed} is not in the package`);
    }
    const stray = packed.filter((path) => !['package.json', 'README.md', 'CONVENTIONS.md', 'bin/resapi.js'].includes(path) && !/^build\/lib\/.+\.(js|d\.ts)$/.test(path));
    assert.deepEqual(stray, []);
  });

  it("should import start from 'resapi' and ResourceClient from 'resapi/client' once installed", async () => {
    const script = `
      import { start } from 'resapi';
      import { ResourceClient } from 'resapi/client';
      const server = await start({ port: 0, memory: true, log: () => {} });
      const client = new ResourceClient(server.url);
      const item = await client.create('things', 't1', { id: 't1', n: 1 });
      console.log(JSON.stringify({ n: (await client.get('things', 't1')).data.n, etag: item.etag.startsWith('"') }));
      await server.close();`;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: project });
    assert.deepEqual(JSON.parse(stdout), { n: 1, etag: true });
  });

  it('should type-check a TypeScript consumer against the declarations', async () => {
    writeFileSync(
      join(project, 'consumer.ts'),
      `import { start, type ResapiServer } from 'resapi';
import { ResourceClient, ResourceError, type Item } from 'resapi/client';
export async function demo(): Promise<number> {
  const server: ResapiServer = await start({ port: 0, memory: true });
  const client = new ResourceClient(server.url, { retry: { attempts: 2 } });
  const item: Item<{ id: string; n: number }> = await client.create('things', 't2', { id: 't2', n: 2 });
  await server.close();
  return item.data.n;
}
export function statusOf(error: unknown): number | undefined {
  return error instanceof ResourceError ? error.problem.status : undefined;
}
`,
    );
    writeFileSync(
      join(project, 'bad.ts'),
      `import { ResourceClient } from 'resapi/client';
export const wrong: string = new ResourceClient('http://127.0.0.1:1').baseUrl.length;
`,
    );
    const options = (files: string[]): string[] => ['--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', '--types', 'node', '--typeRoots', join(REPO, 'node_modules/@types'), ...files];
    const tsc = join(REPO, 'node_modules/.bin/tsc');
    await run(tsc, options(['consumer.ts']), { cwd: project });
    // The declarations are really read: a type error in a consumer is caught.
    await assert.rejects(run(tsc, options(['bad.ts']), { cwd: project }), (error: { stdout?: string }) => /bad\.ts/.test(error.stdout ?? ''));
  });

  it('should serve with npx resapi serve --port 0', async () => {
    // Its own process group: npx starts resapi as a child, and the SIGTERM must reach both.
    const child = spawn(NPX, ['--offline', 'resapi', 'serve', '--port', '0', '--memory'], { cwd: project, env: OFFLINE, stdio: ['ignore', 'pipe', 'ignore'], detached: true });
    const exited = once(child, 'exit');
    try {
      let out = '';
      for await (const chunk of child.stdout as AsyncIterable<Buffer>) {
        out += chunk.toString();
        if (out.includes('\n')) break;
      }
      const url = /^listening on (http:\/\/\S+)/.exec(out)?.[1];
      assert.ok(url !== undefined, `first line: ${out}`);
      const health = await fetch(`${url}/$health`);
      assert.equal(health.status, 200);
    } finally {
      process.kill(-(child.pid as number), 'SIGTERM');
      await exited;
    }
  });

  it("should run the README's examples as written", async () => {
    const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
    const examples = [...readme.matchAll(/<!-- example: (\S+) -->\n```js\n([\s\S]*?)\n```/g)].map((match) => ({ file: match[1] as string, code: match[2] as string }));
    assert.deepEqual(examples.map((example) => example.file).sort(), ['check.test.mjs', 'client.mjs', 'embed.test.mjs']);
    for (const example of examples) {
      writeFileSync(join(project, example.file), `${example.code}\n`);
      const args = example.file.endsWith('.test.mjs') ? ['--test', example.file] : [example.file];
      const { stdout } = await run(process.execPath, args, { cwd: project });
      if (example.file === 'client.mjs') assert.equal(stdout, 'p1 35\n404 Not Found\n');
    }
  });
});
