// `resapi check` (CONVENTIONS.md#conformance-checker; README, The checker) against resapi itself,
// through the real binary: every check passes, with and without credentials and a receiver secret, and
// the run leaves nothing behind; each line and each JSON outcome cites its rule's section of
// CONVENTIONS.md, and with --docs-base the rule's URL; every line of the text report, --verbose too,
// is at most 120 characters, and --junit writes a JUnit file that says the same. Then against deliberately broken servers (resapi behind a proxy
// written here that breaks one rule): one that ignores If-Match, one that answers a bare array, one
// that builds @nextLink from Host, one that marks credentialed answers `public`. The check of that
// rule must fail there, which proves the checker can fail.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { checkCatalogue } from '../../lib/check/checks.js';
import type { CheckReport } from '../../lib/check/run.js';
import { runChecks } from '../../lib/check/run.js';
import { isAnchor } from '../../lib/check/rules.js';
import type { ResapiServer } from '../../lib/server.js';
import { withServer } from '../support/server.js';
import { BIN, startBinary, type RunningServer } from '../support/binary.js';
import { elementsNamed, parseXml } from '../check/xml.js';

const run = promisify(execFile);
const API_KEY = 'check-test-key';
const SECRET = 'check-test-secret';
const DOCS = 'https://example.org/resapi/CONVENTIONS.md';
/** The fields every outcome of `--json` had before checks cited their rules by anchor; they stay. */
const FIELDS = ['id', 'section', 'rule', 'source', 'result'];
/** What a check line looks like: verdict, id, rule, (#anchor), and why. */
const CHECK_LINE = /^ {2}(PASS|FAIL|SKIP|BLOCKED) +[a-z]+\/[a-z0-9-]+: /;

/** `resapi check URL --json` as a user runs it: the parsed report and the exit code. */
async function checkCommand(url: string, flags: readonly string[], env: Readonly<Record<string, string>>): Promise<{ report: CheckReport; code: number }> {
  try {
    const { stdout } = await run(process.execPath, [BIN, 'check', url, '--json', ...flags], { env: { ...process.env, ...env }, maxBuffer: 16 * 1024 * 1024 });
    return { report: JSON.parse(stdout) as CheckReport, code: 0 };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string };
    return { report: JSON.parse(failed.stdout ?? '{}') as CheckReport, code: failed.code ?? -1 };
  }
}

function failures(report: CheckReport): string[] {
  return report.outcomes.filter((outcome) => outcome.result === 'fail').map((outcome) => `${outcome.id}: ${outcome.detail ?? ''}`);
}

function resultOf(report: CheckReport, id: string): string | undefined {
  return report.outcomes.find((outcome) => outcome.id === id)?.result;
}

describe('resapi check against resapi', () => {
  let plain: RunningServer;
  let keyed: RunningServer;
  before(async () => {
    plain = await startBinary(['--memory']);
    keyed = await startBinary(['--memory'], { RESAPI_API_KEYS: API_KEY, RESAPI_WEBHOOK_SECRETS: SECRET });
  });
  after(async () => {
    await plain.stop();
    await keyed.stop();
  });

  it('should pass every check, skip only what needs a key or a secret, and exit 0', async () => {
    const { report, code } = await checkCommand(plain.url, [], {});
    assert.deepEqual(failures(report), []);
    assert.equal(code, 0);
    assert.ok(report.outcomes.length >= 60, `${report.outcomes.length} checks`);
    const skipped = report.outcomes.filter((outcome) => outcome.result === 'skip').map((outcome) => outcome.id);
    assert.ok(skipped.every((id) => id.startsWith('webhooks/') || id.startsWith('caching/credentialed')), `skipped: ${skipped.join(', ')}`);
    assert.ok(report.requests <= 1000);
    assert.deepEqual(report.leftBehind, []);
    assert.equal(report.summary.blocked, 0);
    assert.deepEqual(report.rootCauses, []);
    assert.ok(report.outcomes.every((outcome) => outcome.verdict === outcome.result.toUpperCase()), 'verdict and result agree');
    assert.ok(report.sections.every((section) => section.score === 100 || section.score === null), JSON.stringify(report.sections));
  });

  it('should give each JSON outcome its old fields and the anchor of its rule, the same as the catalogue', async () => {
    const { report } = await checkCommand(plain.url, ['--only', 'resources/,conditional/'], {});
    const catalogue = new Map(checkCatalogue().map((entry) => [entry.id, entry]));
    assert.ok(report.outcomes.length >= 20, `${report.outcomes.length} checks`);
    for (const outcome of report.outcomes) {
      for (const field of FIELDS) assert.equal(typeof (outcome as unknown as Record<string, unknown>)[field], 'string', `${outcome.id} ${field}`);
      const entry = catalogue.get(outcome.id);
      assert.ok(entry !== undefined && isAnchor(outcome.anchor), outcome.id);
      assert.equal(outcome.anchor, entry.anchor);
      assert.equal(outcome.rule, entry.rule);
      assert.equal(outcome.rfc, entry.rfc);
      assert.equal(outcome.source, entry.rfc === undefined ? `CONVENTIONS.md#${entry.anchor}` : `CONVENTIONS.md#${entry.anchor}; ${entry.rfc}`);
      assert.equal(Object.hasOwn(outcome, 'ruleUrl'), false, `${outcome.id} has a ruleUrl without --docs-base`);
    }
  });

  it('should give each JSON outcome the URL of its rule with --docs-base', async () => {
    const { report, code } = await checkCommand(plain.url, ['--only', 'resources/', '--docs-base', DOCS], {});
    assert.equal(code, 0);
    assert.ok(report.outcomes.length > 0);
    for (const outcome of report.outcomes) assert.equal(outcome.ruleUrl, `${DOCS}#${outcome.anchor}`, outcome.id);
  });

  it('should pass every check with an API key and the receiver secret, skipping none', async () => {
    const { report, code } = await checkCommand(keyed.url, ['--api-key-env', 'CHECK_KEY', '--webhook-secret-env', 'CHECK_SECRET'], { CHECK_KEY: API_KEY, CHECK_SECRET: SECRET });
    assert.deepEqual(failures(report), []);
    assert.equal(code, 0);
    assert.deepEqual(report.outcomes.filter((outcome) => outcome.result === 'skip').map((outcome) => outcome.id), []);
  });

  it('should leave the server as it found it: no collection of its own left with items', async () => {
    await checkCommand(plain.url, ['--only', 'resources/,idempotence/'], {});
    const service = (await (await fetch(`${plain.url}/`)).json()) as { value: { name: string; url: string }[] };
    for (const collection of service.value.filter((entry) => entry.name.startsWith('rcheck-'))) {
      const page = (await (await fetch(`${plain.url}${collection.url}`)).json()) as { value: unknown[] };
      assert.deepEqual(page.value, [], `${collection.name} still holds items`);
    }
  });

  it('should print one line per rule and a summary, and refuse a base URL that is not http(s)', async () => {
    const { stdout } = await run(process.execPath, [BIN, 'check', plain.url, '--only', 'resources/']);
    const lines = stdout.split('\n');
    assert.ok(lines.some((line) => /^ {2}PASS {5}resources\/envelope: .+ \(#collection-envelope\)$/.test(line)), stdout);
    const checkLines = lines.filter((line) => CHECK_LINE.test(line));
    assert.equal(checkLines.length, checkCatalogue().filter((entry) => entry.section === 'resources').length);
    for (const line of checkLines) assert.ok(isAnchor(/ \(#([a-z0-9-]+)\)( -- .*)?$/.exec(line)?.[1] ?? ''), line);
    assert.doesNotMatch(stdout, /https?:\/\/example/);
    assert.match(stdout, /\n\d+ checks: \d+ passed, 0 failed, 0 blocked, 0 skipped \(\d+ requests\)\n/);
    assert.match(stdout, /\nResources and the collection envelope +\d+ +0 +0 +0 +100%\n$/);
    await assert.rejects(run(process.execPath, [BIN, 'check', 'ftp://127.0.0.1/']), (error: { code?: number }) => error.code === 2);
  });

  it('should put the URL of each rule on an indented line under its check line with --docs-base', async () => {
    const { stdout } = await run(process.execPath, [BIN, 'check', plain.url, '--only', 'resources/', '--docs-base', DOCS]);
    const lines = stdout.split('\n');
    const at = lines.map((line, index) => (CHECK_LINE.test(line) ? index : -1)).filter((index) => index !== -1);
    assert.ok(at.length > 0, stdout);
    for (const index of at) {
      const anchor = / \(#([a-z0-9-]+)\)( -- .*)?$/.exec(lines[index] ?? '')?.[1];
      assert.equal(lines[index + 1], `           ${DOCS}#${anchor}`, lines[index]);
    }
    assert.equal(lines.filter((line) => line.startsWith(`           ${DOCS}#`)).length, at.length);
  });

  it('should keep every line within 120 characters, --verbose too, and write a JUnit file of the same run', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'resapi-check-'));
    try {
      const junit = join(dir, 'check.xml');
      const { stdout } = await run(process.execPath, [BIN, 'check', keyed.url, '--verbose', '--junit', junit, '--api-key-env', 'CHECK_KEY', '--webhook-secret-env', 'CHECK_SECRET'], { env: { ...process.env, CHECK_KEY: API_KEY, CHECK_SECRET: SECRET }, maxBuffer: 64 * 1024 * 1024 });
      const lines = stdout.split('\n');
      const long = lines.filter((line) => [...line].length > 120);
      assert.deepEqual(long, []);
      const checkLines = lines.filter((line) => CHECK_LINE.test(line));
      assert.equal(checkLines.length, checkCatalogue().length);
      // What was sent and seen, under the check line; the API key never shows.
      assert.ok(lines.some((line) => /^ {11}> PUT \/rcheck-[0-9a-f]+\/c\d+-[0-9a-f]+ \| /.test(line)), 'a request line');
      assert.ok(lines.some((line) => /^ {11}< 201 \| /.test(line)), 'an answer line');
      assert.doesNotMatch(stdout, new RegExp(API_KEY));
      const root = parseXml(await readFile(junit, 'utf8'));
      assert.equal(root.attributes['tests'], String(checkCatalogue().length));
      assert.equal(root.attributes['failures'], '0');
      assert.equal(root.attributes['skipped'], '0');
      assert.equal(elementsNamed(root, 'testcase').length, checkCatalogue().length);
      assert.equal(elementsNamed(root, 'testsuite').length, 7);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('should refuse a --docs-base that is not an absolute http(s) URL, with exit 2 and one clear line', async () => {
    for (const value of ['CONVENTIONS.md', 'ftp://example.org/CONVENTIONS.md', `${DOCS}#etags`]) {
      await assert.rejects(run(process.execPath, [BIN, 'check', plain.url, '--docs-base', value]), (error: { code?: number; stderr?: string }) => {
        assert.equal(error.code, 2, value);
        assert.match(error.stderr ?? '', /^resapi: --docs-base must be the absolute http\(s\) URL of CONVENTIONS\.md/, value);
        return true;
      });
    }
  });
});

/** What a broken proxy may change: the request's fields, and the answer's fields and body. */
interface Breakage {
  request?(headers: IncomingHttpHeaders): IncomingHttpHeaders;
  response?(answer: { status: number; headers: IncomingHttpHeaders; body: Buffer; requestHeaders: IncomingHttpHeaders }): { headers: IncomingHttpHeaders; body: Buffer };
}

/** A server that is resapi behind a proxy applying `breakage`: the broken server the checker must catch. */
async function brokenServer(origin: ResapiServer, breakage: Breakage): Promise<{ url: string; close: () => Promise<void> }> {
  const target = new URL(origin.url);
  const proxy: Server = createServer((req, res) => {
    const headers = breakage.request?.({ ...req.headers }) ?? { ...req.headers };
    const upstream = httpRequest({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...headers, host: target.host } }, (answer) => {
      const chunks: Buffer[] = [];
      answer.on('data', (chunk: Buffer) => chunks.push(chunk));
      answer.on('end', () => {
        const status = answer.statusCode ?? 502;
        const changed = breakage.response?.({ status, headers: { ...answer.headers }, body: Buffer.concat(chunks), requestHeaders: req.headers }) ?? { headers: answer.headers, body: Buffer.concat(chunks) };
        const outgoing: IncomingHttpHeaders = { ...changed.headers };
        delete outgoing['transfer-encoding'];
        if (req.method !== 'HEAD' && status !== 304 && status !== 204) outgoing['content-length'] = String(changed.body.length);
        res.writeHead(status, outgoing as Record<string, string | string[]>);
        res.end(req.method === 'HEAD' ? undefined : changed.body);
      });
    });
    upstream.on('error', () => res.destroy());
    // Headers go at once: a request that declares a body it never sends (errors/content-too-large) must still reach resapi.
    upstream.flushHeaders();
    req.pipe(upstream);
  });
  proxy.listen(0, '127.0.0.1');
  await once(proxy, 'listening');
  return {
    url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    close: async () => {
      proxy.closeAllConnections();
      await new Promise((resolve) => proxy.close(resolve));
    },
  };
}

/** Runs the checks against a broken server; the report and the ids that failed. */
async function checkBroken(config: Readonly<Record<string, unknown>>, breakage: Breakage, options: { apiKey?: string } = {}): Promise<CheckReport> {
  let report: CheckReport | undefined;
  await withServer({ memory: true, ...config }, async (origin) => {
    const broken = await brokenServer(origin, breakage);
    try {
      report = await runChecks(broken.url, options.apiKey === undefined ? {} : { apiKey: options.apiKey });
    } finally {
      await broken.close();
    }
  });
  return report as CheckReport;
}

/** The answer's JSON object, or undefined for anything else (HEAD, 304, CSV, a problem). */
function jsonObjectOf(headers: IncomingHttpHeaders, body: Buffer): Record<string, unknown> | undefined {
  if (!/^application\/json/i.test(String(headers['content-type'] ?? '')) || body.length === 0) return undefined;
  const parsed: unknown = JSON.parse(body.toString('utf8'));
  return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
}

describe('resapi check against broken servers', () => {
  it('should fail conditional/if-match-stale against a server that ignores If-Match', async () => {
    // Unconditional PUTs allowed, and If-Match removed on the way in: every PUT is an upsert.
    const report = await checkBroken({ allowUnconditionalPut: true }, {
      request: (headers) => {
        delete headers['if-match'];
        return headers;
      },
    });
    assert.equal(resultOf(report, 'conditional/if-match-stale'), 'fail');
    assert.equal(resultOf(report, 'resources/envelope'), 'pass', 'the rest of the server still works');
  });

  it('should fail resources/envelope against a server that answers a collection as a bare array', async () => {
    const report = await checkBroken({}, {
      response: ({ headers, body }) => {
        const value = jsonObjectOf(headers, body)?.['value'];
        return { headers, body: Array.isArray(value) ? Buffer.from(JSON.stringify(value)) : body };
      },
    });
    assert.equal(resultOf(report, 'resources/envelope'), 'fail');
    assert.equal(resultOf(report, 'conditional/if-match-stale'), 'pass');
  });

  it('should fail paging/next-link-not-from-host against a server that builds @nextLink from Host', async () => {
    const report = await checkBroken({}, {
      response: ({ headers, body, requestHeaders }) => {
        const parsed = jsonObjectOf(headers, body);
        const link = parsed?.['@nextLink'];
        if (parsed === undefined || typeof link !== 'string') return { headers, body };
        const rebuilt = `http://${String(requestHeaders.host)}${new URL(link, 'http://resapi.invalid').pathname}${new URL(link, 'http://resapi.invalid').search}`;
        return { headers: { ...headers, link: `<${rebuilt}>; rel="next"` }, body: Buffer.from(JSON.stringify({ ...parsed, '@nextLink': rebuilt })) };
      },
    });
    assert.equal(resultOf(report, 'paging/next-link-not-from-host'), 'fail');
    assert.equal(resultOf(report, 'paging/next-link-walk'), 'pass', 'links from a truthful Host still work');
  });

  it('should fail caching/credentialed-not-public against a server that marks credentialed answers public', async () => {
    const report = await checkBroken({ apiKeys: [API_KEY] }, {
      response: ({ headers, body }) => {
        const cacheControl = headers['cache-control'];
        return { headers: typeof cacheControl === 'string' ? { ...headers, 'cache-control': cacheControl.replace(/\bprivate\b/, 'public') } : headers, body };
      },
    }, { apiKey: API_KEY });
    assert.equal(resultOf(report, 'caching/credentialed-not-public'), 'fail');
    assert.equal(resultOf(report, 'resources/get-item'), 'pass');
  });
});
