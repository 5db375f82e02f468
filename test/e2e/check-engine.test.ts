// `resapi check` (CONVENTIONS.md#conformance-checker) as a CI runs it, through the real binary, against
// servers written here: a port where nothing listens, a server that does not speak HTTP, one that
// never answers, a TLS URL to a plain server (each: exit 2, one line, nothing stored or cleaned up);
// and a tiny server that answers 200 instead of 201 to a create and collections as bare arrays: the
// create check fails once, what needs it is BLOCKED naming it, and the envelope check is judged on its
// own. Then the options a CI needs: --only/--skip, --header reaching the server, --collection,
// --timeout, --junit, unknown flags; and --webhook-scheme against resapi configured with that source.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { readFile, writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { CHECK_FLAGS } from '../../lib/cli/args.js';
import { checkCatalogue } from '../../lib/check/checks.js';
import { SCHEME_ANCHORS } from '../../lib/check/rules.js';
import { CheckUnreachable, runChecks, type CheckReport } from '../../lib/check/run.js';
import { runBinary, startBinary } from '../support/binary.js';
import { tempDirsForSuite } from '../support/temp-dir.js';
import { elementsNamed, parseXml } from '../check/xml.js';

/**
 * The tiny server waits for the 1 MiB body errors/content-too-large declares and never sends, as a
 * server that does not check Content-Length first does: that check fails on the timeout, so keep it short.
 */
const QUICK = ['--timeout', '2000'];

/** `resapi check` with `args`: exit code, stdout, stderr. */
function check(args: readonly string[], env: Readonly<Record<string, string>> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return runBinary(['check', ...args], env);
}

function long(text: string): string[] {
  return text.split('\n').filter((line) => [...line].length > 120);
}

/** A port nothing listens on: one the system gave out a moment ago. */
async function closedPort(): Promise<number> {
  const server = createNetServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function listen(server: Server | ReturnType<typeof createNetServer>): Promise<string> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('resapi check against a server it cannot reach', () => {
  const servers: { close(): void }[] = [];
  after(() => {
    for (const server of servers) server.close();
  });

  it('should end at once with one line and exit 2 when the connection is refused, listing no clean-up', async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    for (const flags of [[], ['--json']]) {
      const { code, stdout, stderr } = await check([url, ...flags]);
      assert.equal(code, 2);
      assert.equal(stdout, '');
      assert.match(stderr, /^resapi: check: cannot reach http:\/\/127\.0\.0\.1:\d+: connection refused \(ECONNREFUSED\)\n$/);
    }
  });

  it('should say so in one line when the answer is not HTTP, or TLS fails, or nothing answers in time', async () => {
    const talker = createNetServer((socket) => socket.end('SSH-2.0-OpenSSH_9.6\r\n'));
    const silent = createNetServer(() => {});
    const plain = createServer((_, res) => res.end('plain'));
    servers.push(talker, silent, plain);
    const cases: [string[], RegExp][] = [
      [[await listen(talker)], /: the answer is not HTTP: .+ \(HPE_[A-Z_]+\)\n$/],
      [[(await listen(plain)).replace('http:', 'https:')], /: TLS failed: .+\n$/],
      [[await listen(silent), '--timeout', '300'], /: no answer within 300 ms\n$/],
    ];
    for (const [args, line] of cases) {
      const { code, stdout, stderr } = await check(args);
      assert.equal(code, 2, args.join(' '));
      assert.equal(stdout, '');
      assert.match(stderr, line);
      assert.equal(stderr.split('\n').length, 2, stderr);
    }
  });

  it('should reject runChecks with CheckUnreachable, saying why', async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    await assert.rejects(runChecks(url), (error: unknown) => error instanceof CheckUnreachable && error.reason === 'connection refused (ECONNREFUSED)');
  });
});

/**
 * A server of the kind people write first: items with ETags and If-None-Match, but 200 (not 201) for
 * a create, collections as bare arrays, no problem documents. It keeps the header fields it was sent.
 */
class TinyServer {
  readonly items = new Map<string, Record<string, unknown>>();
  readonly received: IncomingHttpHeaders[] = [];
  readonly paths: string[] = [];
  private readonly server: Server = createServer((req, res) => {
    this.received.push(req.headers);
    let body = '';
    req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
    req.on('end', () => this.answer(req.method ?? 'GET', req.url ?? '/', req.headers, body, res));
  });
  url = '';

  async start(): Promise<void> {
    this.url = await listen(this.server);
  }

  close(): void {
    this.server.closeAllConnections();
    this.server.close();
  }

  private answer(method: string, target: string, headers: IncomingHttpHeaders, body: string, res: import('node:http').ServerResponse): void {
    const path = new URL(target, 'http://tiny.invalid').pathname;
    this.paths.push(`${method} ${path}`);
    const parts = path.split('/').filter((part) => part !== '');
    const send = (status: number, value?: unknown, fields: Record<string, string> = {}): void => {
      res.writeHead(status, { 'Content-Type': 'application/json', ...fields });
      res.end(value === undefined ? '' : JSON.stringify(value));
    };
    const tagged = (value: unknown): Record<string, string> => ({ ETag: `"${createHash('sha1').update(JSON.stringify(value)).digest('hex')}"` });
    if (method === 'GET' && parts.length === 1) {
      return send(200, [...this.items].filter(([key]) => key.startsWith(`${parts[0]}/`)).map(([, value]) => value));
    }
    if (parts.length !== 2) return send(404, { error: 'no such route' });
    const key = parts.join('/');
    const stored = this.items.get(key);
    if (method === 'GET') return stored === undefined ? send(404, { error: 'not found' }) : send(200, stored, tagged(stored));
    if (method === 'DELETE') {
      this.items.delete(key);
      return send(204);
    }
    if (method !== 'PUT') return send(405, { error: 'method not allowed' });
    if (headers['if-none-match'] === '*' && stored !== undefined) return send(412, { error: 'exists' });
    let value: Record<string, unknown>;
    let etag: Record<string, string>;
    try {
      value = JSON.parse(body) as Record<string, unknown>;
      etag = tagged(value);
    } catch {
      // Not JSON, or nested too deep to serialise again.
      return send(400, { error: 'bad json' });
    }
    this.items.set(key, value);
    return send(200, value, etag);
  }
}

describe('resapi check against a tiny server that answers 200 to a create and bare arrays', () => {
  const tiny = new TinyServer();
  const tempDir = tempDirsForSuite('check-engine');
  before(() => tiny.start());
  after(() => tiny.close());

  it('should fail the create check once, block what needs it naming it, and judge the envelope on its own', async () => {
    const { code, stdout } = await check([tiny.url, ...QUICK, '--json']);
    assert.equal(code, 1);
    const report = JSON.parse(stdout) as CheckReport;
    const byId = new Map(report.outcomes.map((outcome) => [outcome.id, outcome]));
    const create = byId.get('resources/put-create');
    assert.equal(create?.verdict, 'FAIL');
    assert.match(create?.detail ?? '', /^expected 201, got 200 /);
    // One root cause, one FAIL: no other check fails for the create. Those that fail break rules of
    // their own (the tiny server ignores If-Match, has no POST, no problem documents, takes any body).
    const failed = report.outcomes.filter((outcome) => outcome.verdict === 'FAIL');
    assert.deepEqual(failed.filter((outcome) => /expected 201, got 200|could not create/.test(outcome.detail ?? '')).map((outcome) => outcome.id), ['resources/put-create']);
    assert.deepEqual(failed.map((outcome) => outcome.id), [
      'resources/put-create',
      'resources/envelope',
      'conditional/if-match-absent',
      'idempotence/post-create',
      'errors/problem-document',
      'errors/not-an-object',
      'errors/id-mismatch',
      'errors/inexact-number',
      'errors/request-id',
      'errors/unsupported-media-type',
      'errors/content-too-large',
    ]);
    for (const id of ['resources/get-item', 'conditional/replace', 'conditional/not-modified', 'paging/listing', 'paging/next-link-walk', 'caching/must-revalidate']) {
      assert.equal(byId.get(id)?.verdict, 'BLOCKED', id);
      assert.equal(byId.get(id)?.blockedBy, 'resources/put-create', id);
      assert.equal(byId.get(id)?.detail, 'blocked by resources/put-create', id);
    }
    // The envelope needs no item: it fails for the bare array it is about.
    assert.equal(byId.get('resources/envelope')?.verdict, 'FAIL');
    assert.match(byId.get('resources/envelope')?.detail ?? '', /^a bare array: 200 /);
    assert.equal(byId.get('resources/no-null-next-link')?.blockedBy, 'resources/envelope');
    assert.equal(byId.get('resources/missing-item')?.verdict, 'PASS');
    const [first] = report.rootCauses;
    assert.equal(first?.id, 'resources/put-create');
    assert.equal(first.blocked.length, report.outcomes.filter((outcome) => outcome.blockedBy === 'resources/put-create').length);
    assert.ok(first.blocked.length >= 50, `${first.blocked.length} blocked`);
    assert.equal(report.summary.fail, failed.length);
    assert.equal(report.summary.pass + report.summary.fail + report.summary.blocked + report.summary.skip, report.outcomes.length);
    assert.deepEqual(report.leftBehind, []);
  });

  it('should keep every line within 120 characters, --verbose too, and name the failed check on each blocked line', async () => {
    for (const flags of [[], ['--verbose']]) {
      const { code, stdout } = await check([tiny.url, ...QUICK, ...flags]);
      assert.equal(code, 1);
      assert.deepEqual(long(stdout), []);
      const blocked = stdout.split('\n').filter((line) => line.startsWith('  BLOCKED  resources/get-item: '));
      assert.equal(blocked.length, 1);
      assert.match(blocked[0] ?? '', / -- by resources\/put-create$/);
      assert.match(stdout, /\n {2}resources\/put-create blocks \d+ -- expected 201, got 200 /);
      assert.match(stdout, /\nResources and the collection envelope +1 +2 +5 +0 +12%\n/);
    }
  });

  it('should write JUnit XML with the right counts, failures and blocked checks told apart', async () => {
    const file = join(tempDir(), 'check.xml');
    const { stdout } = await check([tiny.url, ...QUICK, '--json', '--junit', file]);
    const report = JSON.parse(stdout) as CheckReport;
    const root = parseXml(await readFile(file, 'utf8'));
    const cases = elementsNamed(root, 'testcase');
    assert.equal(cases.length, report.outcomes.length);
    assert.equal(root.attributes['tests'], String(report.outcomes.length));
    assert.equal(root.attributes['failures'], String(report.summary.fail));
    assert.equal(root.attributes['skipped'], String(report.summary.skip + report.summary.blocked));
    assert.equal(elementsNamed(root, 'failure').length, report.summary.fail);
    const skips = elementsNamed(root, 'skipped').map((skipped) => skipped.attributes['message'] ?? '');
    assert.equal(skips.filter((message) => message.startsWith('blocked by ')).length, report.summary.blocked);
    assert.equal(skips.filter((message) => !message.startsWith('blocked by ')).length, report.summary.skip);
    for (const suite of elementsNamed(root, 'testsuite')) {
      const inSuite = elementsNamed(suite, 'testcase');
      assert.equal(suite.attributes['tests'], String(inSuite.length));
      assert.ok(inSuite.every((testcase) => testcase.attributes['classname'] === inSuite[0]?.attributes['classname']));
    }
    const create = cases.find((testcase) => testcase.attributes['name'] === 'resources/put-create');
    assert.match(elementsNamed(create as never, 'failure')[0]?.attributes['message'] ?? '', /^expected 201, got 200 /);
  });

  it('should run only what --only names, with what it needs, and skip what needs a check --skip leaves out', async () => {
    const only = JSON.parse((await check([tiny.url, ...QUICK, '--json', '--only', 'conditional/replace,errors'])).stdout) as CheckReport;
    const errors = checkCatalogue().filter((entry) => entry.section === 'errors').map((entry) => entry.id);
    assert.deepEqual(only.outcomes.map((outcome) => outcome.id).sort(), ['resources/put-create', 'conditional/replace', ...errors].sort());
    const skipped = JSON.parse((await check([tiny.url, ...QUICK, '--json', '--only', 'conditional/replace', '--skip', 'resources'])).stdout) as CheckReport;
    assert.deepEqual(skipped.outcomes.map((outcome) => [outcome.id, outcome.verdict, outcome.detail]), [['conditional/replace', 'SKIP', 'needs resources/put-create, left out by --skip']]);
  });

  it('should refuse an unknown check or section with exit 2, naming each', async () => {
    const { code, stdout, stderr } = await check([tiny.url, ...QUICK, '--only', 'paging/next-link,resources', '--skip', 'nope']);
    assert.equal(code, 2);
    assert.equal(stdout, '');
    assert.match(stderr, /^resapi: --only: no check or section is named paging\/next-link \(sections: resources, conditional, caching, idempotence, paging, errors, webhooks; a check is section\/name\)\n/);
    assert.match((await check([tiny.url, ...QUICK, '--skip', 'nope,errors/nothing'])).stderr, /no check or section is named nope, errors\/nothing/);
  });

  it('should send every --header on every request, and refuse one that is not a field', async () => {
    const before = tiny.received.length;
    const { code } = await check([tiny.url, ...QUICK, '--only', 'resources', '--header', 'X-Tenant: acme', '--header=X-Trace:  t-1  ']);
    assert.equal(code, 1);
    const sent = tiny.received.slice(before);
    assert.ok(sent.length >= 4, `${sent.length} requests`);
    assert.ok(sent.every((fields) => fields['x-tenant'] === 'acme' && fields['x-trace'] === 't-1'), JSON.stringify(sent[0]));
    for (const bad of ['X-Tenant', 'X Tenant: a', 'X-Tenant: a\r\nX-Evil: b', 'Host: elsewhere', 'Content-Length: 3', 'X-Tenant:']) {
      const refused = await check([tiny.url, ...QUICK, '--header', bad]);
      assert.equal(refused.code, 2, bad);
      assert.match(refused.stderr, /^resapi: --header /, bad);
    }
    const twice = await check([tiny.url, ...QUICK, '--header', 'Authorization: Bearer x', '--api-key-env', 'KEY'], { KEY: 'k' });
    assert.match(twice.stderr, /--header Authorization and --api-key-env both set the credentials/);
  });

  it('should count an Authorization --header as credentials, so the credentialed checks apply', async () => {
    const report = JSON.parse((await check([tiny.url, ...QUICK, '--json', '--only', 'caching/credentialed-not-public', '--header', 'Authorization: Bearer t'])).stdout) as CheckReport;
    assert.equal(report.outcomes.find((outcome) => outcome.id === 'caching/credentialed-not-public')?.verdict, 'BLOCKED');
  });

  it('should work inside --collection, and remove only what the run stored there', async () => {
    tiny.items.set('scratch/kept', { id: 'kept', name: 'not the run\'s' });
    const before = tiny.paths.length;
    const { code, stdout } = await check([tiny.url, ...QUICK, '--json', '--collection', 'scratch', '--only', 'resources,conditional/if-match-absent']);
    assert.equal(code, 1);
    const report = JSON.parse(stdout) as CheckReport;
    const touched = tiny.paths.slice(before).filter((line) => !line.endsWith(' /'));
    assert.ok(touched.every((line) => / \/scratch(-list)?(\/|$)/.test(line)), touched.join('\n'));
    // Stored by the run and gone: the ids it made; kept: what was there before.
    assert.ok(touched.some((line) => /^DELETE \/scratch\/c\d+-[0-9a-f]+$/.test(line)), touched.join('\n'));
    assert.deepEqual([...tiny.items.keys()].filter((key) => key.startsWith('scratch/')), ['scratch/kept']);
    assert.deepEqual(report.leftBehind, []);
    const refused = await check([tiny.url, ...QUICK, '--collection', '$bulk']);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /^resapi: --collection must be a collection name/);
  });

  it('should refuse an unknown flag with exit 2 and the list of the known ones', async () => {
    const { code, stdout, stderr } = await check([tiny.url, ...QUICK, '--insecure']);
    assert.equal(code, 2);
    assert.equal(stdout, '');
    assert.match(stderr, /^resapi: unknown option '--insecure' for resapi check; known flags: /);
    for (const flag of CHECK_FLAGS) assert.ok(stderr.includes(flag), flag);
  });
});

/** A secret as each scheme's providers hand one out. */
function secretFor(scheme: string): string {
  const bytes = randomBytes(24);
  return scheme === 'standard' ? `whsec_${bytes.toString('base64')}` : `check-${scheme}-${bytes.toString('hex')}`;
}

describe('resapi check --webhook-scheme against resapi receiving from a source of that scheme', () => {
  const tempDir = tempDirsForSuite('check-schemes');
  for (const scheme of ['resapi', 'standard', 'github', 'stripe']) {
    it(`should pass every webhook check signed as a ${scheme} provider signs`, async () => {
      // resapi's own scheme at the default path reads RESAPI_WEBHOOK_SECRETS; the others have a path of their own.
      const path = scheme === 'resapi' ? '/webhooks' : `/webhooks/${scheme}`;
      const variable = scheme === 'resapi' ? 'RESAPI_WEBHOOK_SECRETS' : `CHECK_${scheme.toUpperCase()}_SECRETS`;
      const secret = secretFor(scheme);
      const config = join(tempDir(), 'config.json');
      await writeFile(config, JSON.stringify({ webhooks: { sources: [{ path, scheme, secretsEnv: variable }] } }));
      const server = await startBinary(['--memory', '--config', config], { [variable]: secret });
      try {
        const args = [server.url, '--json', '--only', 'webhooks', '--webhook-scheme', scheme, '--webhook-path', path, '--webhook-secret-env', variable];
        const { code, stdout, stderr } = await check(args, { [variable]: secret });
        const report = JSON.parse(stdout || '{"outcomes":[]}') as CheckReport;
        const wrong = report.outcomes.filter((outcome) => outcome.verdict !== 'PASS' && outcome.verdict !== 'SKIP');
        assert.deepEqual(wrong.map((outcome) => `${outcome.id}: ${outcome.verdict} ${outcome.detail ?? ''}`), [], stderr);
        assert.equal(code, 0);
        const skipped = report.outcomes.filter((outcome) => outcome.verdict === 'SKIP').map((outcome) => outcome.id);
        // Only the rules of resapi's own X-Signature (and GitHub's missing timestamp) do not apply elsewhere.
        const expected = scheme === 'resapi' ? [] : ['webhooks/sha256-prefix', 'webhooks/signature-once', ...(scheme === 'github' ? ['webhooks/stale-timestamp'] : [])];
        assert.deepEqual(skipped.sort(), expected.sort());
        // A rule of the scheme cites the scheme's own section; one shared by every source, its own.
        const cited = new Map(report.outcomes.map((outcome) => [outcome.id, outcome]));
        const declared = new Map(checkCatalogue().map((entry) => [entry.id, entry.anchor]));
        for (const id of ['webhooks/missing-signature', 'webhooks/wrong-signature', 'webhooks/raw-bytes', 'webhooks/stale-timestamp', 'webhooks/event-shape']) {
          const anchor = scheme === 'resapi' ? declared.get(id) : SCHEME_ANCHORS[scheme as keyof typeof SCHEME_ANCHORS];
          assert.equal(cited.get(id)?.anchor, anchor, id);
          assert.equal(cited.get(id)?.source, `CONVENTIONS.md#${String(anchor)}`, id);
        }
        for (const [id, anchor] of [['webhooks/duplicate', 'deduplication'], ['webhooks/accepted', 'durable-acceptance'], ['webhooks/signature-before-parse', 'receiving-order']] as const) {
          assert.equal(cited.get(id)?.anchor, anchor, id);
        }
      } finally {
        await server.stop();
      }
    });
  }

  it('should refuse a scheme it does not know', async () => {
    const { code, stderr } = await check(['http://127.0.0.1:9', '--webhook-scheme', 'svix']);
    assert.equal(code, 2);
    assert.match(stderr, /^resapi: --webhook-scheme must be one of resapi, standard, github, stripe, not 'svix'/);
  });
});
