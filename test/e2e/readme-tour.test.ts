// The README's tour of the conventions (README, A tour of the conventions) is replayed against the real
// binary: every block marked `<!-- transcript: ID -->` runs in order, its `$ curl ...` commands carried
// out by a node:http emulation of the curl options it uses (test/support/curl.ts), and what they print
// must equal the block byte for byte once the values that differ between runs are shown as the
// README's placeholders (test/support/placeholders.ts). So the tour cannot drift from the server.
//
// RESAPI_TOUR_WRITE=1 writes the outputs of this run into the README instead of comparing (after a
// deliberate change; review the diff). RESAPI_TOUR_CURL=1 runs the real curl instead of the emulation,
// to check that the emulation prints what curl prints.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { join } from 'node:path';
import { BIN, REPO, startBinary, type RunningServer } from '../support/binary.js';
import { parseCurl, perform } from '../support/curl.js';
import { eventually } from '../support/eventually.js';
import { Placeholders } from '../support/placeholders.js';
import { expandWord, literalWord, tokenize, type Token } from '../support/shell.js';
import { tempDirsForSuite } from '../support/temp-dir.js';
import { compareTranscript, readTranscripts, renderTranscript, replaceTranscripts, type TypedCommand } from '../support/transcript.js';

const README = join(REPO, 'README.md');
const WRITE = process.env.RESAPI_TOUR_WRITE === '1';
const REAL_CURL = process.env.RESAPI_TOUR_CURL === '1';
const SECRET_PLACEHOLDER = '<SIGNING_SECRET>';
/** The tour, in order: a block that disappears or moves fails here rather than going unchecked. */
const STEPS = [
  '01-get',
  '02-revalidate-304',
  '03-unconditional-428',
  '04-replace-200',
  '05-stale-412',
  '06-create-201',
  '07-idempotency-key',
  '08-idempotency-key-reused-422',
  '09-paging',
  '10-filter',
  '11-bulk-csv-twice',
  '12-undo-delete',
  '13-signed-webhook',
  '14-subscription',
  '15-delivered-to-3001',
];
/** Delivery to the second server is asynchronous (an outbox worker); the README's reader waits a moment, the test polls. */
const DELIVERY_DEADLINE_MS = 15_000;

const transcripts = readTranscripts(readFileSync(README, 'utf8'));

describe('the README tour', () => {
  let folder = '';
  let first: RunningServer | undefined;
  let second: RunningServer | undefined;
  let shell: TourShell | undefined;
  const agent = new Agent({ keepAlive: true });
  const written = new Map<string, string>();

  before(async () => {
    folder = tourFolder();
    const secret = randomBytes(24).toString('hex');
    const env = { RESAPI_WEBHOOK_SECRETS: secret };
    // As `npm start` serves (package.json), in a new data dir so the seed loads.
    first = await startBinary(['--seed', 'data/sample', '--config', 'data/config.json', '--data-dir', join(folder, 'store')], env);
    second = await startBinary(['--memory'], env);
    const placeholders = new Placeholders(
      [
        { shown: '127.0.0.1:3000', real: new URL(first.url).host },
        { shown: '127.0.0.1:3001', real: new URL(second.url).host },
      ],
      new Map([[SECRET_PLACEHOLDER, secret]]),
    );
    shell = new TourShell(folder, placeholders, agent);
  });

  after(async () => {
    agent.destroy();
    await first?.stop();
    await second?.stop();
    if (WRITE && written.size > 0) writeFileSync(README, replaceTranscripts(readFileSync(README, 'utf8'), written));
  });
  // Registered after the hook that stops the servers, so the folder goes once they are stopped.
  const tourFolder = tempDirsForSuite('tour');

  it('should hold every step of the tour, in order, each running at least one curl', () => {
    assert.deepEqual(
      transcripts.map((transcript) => transcript.id),
      STEPS,
    );
    for (const transcript of transcripts) assert.ok(transcript.commands.some((command) => command.line.startsWith('curl ')), `${transcript.id} runs no curl`);
  });

  for (const id of STEPS) {
    it(`should print what the README shows for ${id}`, async () => {
      const transcript = transcripts.find((candidate) => candidate.id === id);
      assert.ok(transcript !== undefined, `README has no transcript ${id}`);
      assert.ok(shell !== undefined && second !== undefined);
      if (id === '15-delivered-to-3001') await untilInboxHolds(second.url, 1);
      const outputs: string[] = [];
      for (const command of transcript.commands) outputs.push(await shell.run(command));
      const actual = renderTranscript(transcript.commands, outputs);
      if (WRITE) written.set(id, actual);
      else {
        const report = compareTranscript(id, transcript.text, actual);
        if (report !== undefined) assert.fail(report);
      }
    });
  }
});

describe('README transcripts', () => {
  const block = ['$ curl -i http://127.0.0.1:3000/products/p-100', 'HTTP/1.1 200 OK', 'Content-Type: application/json', 'Cache-Control: max-age=0, must-revalidate', '', '{"id":"p-100"}', ''].join('\n');

  it('should report a transcript that drifted from the real output, naming the step and both lines', () => {
    const drifted = block.replace('max-age=0, must-revalidate', 'max-age=60');
    const report = compareTranscript('01-get', drifted, block);
    assert.ok(report !== undefined);
    assert.match(report, /README transcript 01-get differs/);
    assert.match(report, /^- "Cache-Control: max-age=60"$/m);
    assert.match(report, /^\+ "Cache-Control: max-age=0, must-revalidate"$/m);
    assert.equal(compareTranscript('01-get', block, block), undefined);
  });

  it('should report a missing final newline or a trailing space, which a terminal hides', () => {
    assert.match(compareTranscript('x', block, block.replace('OK\n', 'OK \n')) ?? '', /^\+ "HTTP\/1\.1 200 OK "$/m);
    assert.notEqual(compareTranscript('x', block, block.slice(0, -1)), undefined);
  });

  it('should read back the commands of a block, with continuations and heredocs', () => {
    const [transcript] = readTranscripts(['<!-- transcript: t -->', '```console', "$ cat > a.csv <<'CSV'", 'id', 'CSV', "$ curl -i -X PUT 'http://127.0.0.1:3000/x/$bulk' \\", '    --data-binary @a.csv', 'HTTP/1.1 200 OK', '', '```', ''].join('\n'));
    assert.ok(transcript !== undefined);
    assert.deepEqual(
      transcript.commands.map((command) => [command.line, command.heredoc]),
      [
        ["cat > a.csv <<'CSV'", 'id\n'],
        ["curl -i -X PUT 'http://127.0.0.1:3000/x/$bulk'     --data-binary @a.csv", undefined],
      ],
    );
    assert.equal(renderTranscript(transcript.commands, ['', 'HTTP/1.1 200 OK\n\n']), transcript.text);
  });

  it('should show as placeholders only what differs between two runs', () => {
    const run = (port: string, date: string, id: string, mac: string, cacheControl: string): string => {
      const body = `{"id":"${id}","u":"http://127.0.0.1:${port}/"}`;
      const printed = [`HTTP/1.1 201 Created`, `ETag: "${mac}"`, `Cache-Control: ${cacheControl}`, `Location: /p/${id}`, `Date: ${date}`, `Content-Length: ${Buffer.byteLength(body)}`, '', body].join('\n');
      return new Placeholders([{ shown: '127.0.0.1:3000', real: `127.0.0.1:${port}` }], new Map()).fromServer(printed);
    };
    const one = run('41234', 'Tue, 24 Nov 2026 02:07:15 GMT', '01m85mxbxj8wtrjna0q73rhafz', 'AAAA', 'no-store');
    assert.equal(one, run('5123', 'Wed, 25 Nov 2026 10:00:00 GMT', '01m86aaaaaaaaaaaaaaaaaaaaa', 'BBBB', 'no-store'));
    assert.match(one, /^Location: \/p\/<id-1>$/m);
    assert.match(one, /^Content-Length: 44$/m);
    assert.match(one, /^ETag: "<etag-1>"$/m);
    assert.notEqual(one, run('41234', 'Tue, 24 Nov 2026 02:07:15 GMT', '01m85mxbxj8wtrjna0q73rhafz', 'AAAA', 'private'));
  });

  it('should follow the real @nextLink where the README shows <token>', () => {
    const placeholders = new Placeholders([], new Map());
    assert.throws(() => placeholders.toServer('/p?$skiptoken=<token>'), /before any response/);
    assert.equal(placeholders.fromServer('{"@nextLink":"/p?$skiptoken=eyJ2Ijoy.mac_-1"}'), '{"@nextLink":"/p?$skiptoken=<token>"}');
    assert.equal(placeholders.toServer('/p?$skiptoken=<token>'), '/p?$skiptoken=eyJ2Ijoy.mac_-1');
  });

  it('should read the curl options as curl does', () => {
    const noFiles = (name: string): Buffer => assert.fail(`no file ${name}`);
    const query = parseCurl(['-i', '-G', 'http://127.0.0.1:3000/p', '--data-urlencode', '$filter=price lt 10', '--data-urlencode', "$select=a,b'"], noFiles);
    assert.equal(query.method, 'GET');
    assert.equal(query.body, undefined);
    assert.equal(query.url.search, '?$filter=price%20lt%2010&$select=a%2Cb%27');
    const post = parseCurl(['http://127.0.0.1:3000/p', '-H', 'Content-Type: application/json', '-d', '{"a":1}'], noFiles);
    assert.equal(post.method, 'POST');
    assert.deepEqual(post.headers.filter(([name]) => name === 'Content-Type'), [['Content-Type', 'application/json']]);
    assert.equal(parseCurl(['-X', 'PUT', 'http://127.0.0.1:3000/p', '-d', 'a'], noFiles).headers.at(-1)?.[1], 'application/x-www-form-urlencoded');
    assert.equal(parseCurl(['http://127.0.0.1:3000/p', '-d', '@f'], () => Buffer.from('a\r\nb\n')).body?.toString(), 'ab');
    assert.equal(parseCurl(['http://127.0.0.1:3000/p', '--data-binary', '@f'], () => Buffer.from('a\r\nb\n')).body?.toString(), 'a\r\nb\n');
    assert.throws(() => parseCurl(['-L', 'http://127.0.0.1:3000/p'], noFiles), /does not replay -L/);
    assert.throws(() => parseCurl(['http://example.com/'], noFiles), /only talks to http:\/\/127\.0\.0\.1/);
  });

  it('should read quoting and $(...) as a POSIX shell does', () => {
    const words = tokenize(`curl -H "X-Signature: \\$x \\"$(sign --secret-env S < e.json)\\"" '$y' a\\ b`);
    assert.deepEqual(words, [
      { kind: 'word', parts: [{ kind: 'text', text: 'curl' }] },
      { kind: 'word', parts: [{ kind: 'text', text: '-H' }] },
      { kind: 'word', parts: [{ kind: 'text', text: 'X-Signature: $x "' }, { kind: 'command', source: 'sign --secret-env S < e.json' }, { kind: 'text', text: '"' }] },
      { kind: 'word', parts: [{ kind: 'text', text: '$y' }] },
      { kind: 'word', parts: [{ kind: 'text', text: 'a b' }] },
    ]);
    assert.throws(() => tokenize('curl $URL'), /does not read "\$" outside quotes/);
    assert.throws(() => tokenize('echo "$HOME"'), /expands only \$\(\.\.\.\)/);
  });
});

/**
 * Runs the commands the tour uses, in one working directory that stands for the reader's: `curl`,
 * `export NAME=VALUE`, `cat > FILE <<'DELIM'`, and inside `$(...)` `node bin/resapi.js sign ... < FILE`.
 */
class TourShell {
  private readonly variables = new Map<string, string>();

  constructor(
    private readonly cwd: string,
    private readonly placeholders: Placeholders,
    private readonly agent: Agent,
  ) {}

  /** What the command printed, as the README shows it. */
  async run(command: TypedCommand): Promise<string> {
    const tokens = tokenize(command.line);
    const name = literalWord(tokens[0]);
    if (name === 'curl') {
      const args = await this.words(tokens.slice(1));
      const printed = REAL_CURL ? await realCurl(args, this.cwd) : await perform(parseCurl(args, (file) => readFileSync(join(this.cwd, file))), this.agent);
      return this.placeholders.fromServer(printed);
    }
    if (name === 'export' && tokens.length === 2) {
      const [assignment = ''] = await this.words(tokens.slice(1));
      const equals = assignment.indexOf('=');
      if (equals <= 0) throw new SyntaxError(`export needs NAME=VALUE: ${command.line}`);
      this.variables.set(assignment.slice(0, equals), assignment.slice(equals + 1));
      return '';
    }
    if (name === 'cat' && tokens.length === 5 && isOperator(tokens[1], '>') && isOperator(tokens[3], '<<') && command.heredoc !== undefined) {
      writeFileSync(join(this.cwd, literalWord(tokens[2])), this.placeholders.toServer(command.heredoc));
      return '';
    }
    throw new SyntaxError(`the tour's shell does not run: ${command.line}`);
  }

  /** Words with `$(...)` run and the README's placeholders replaced by what the test's servers use. */
  private async words(tokens: readonly Token[]): Promise<string[]> {
    const words: string[] = [];
    for (const token of tokens) {
      if (token.kind !== 'word') throw new SyntaxError(`the tour's curl commands use no redirection (${token.operator})`);
      words.push(this.placeholders.toServer(await expandWord(token.parts, (source) => this.substitute(source))));
    }
    return words;
  }

  /** `$(node bin/resapi.js sign --secret-env NAME < FILE)`: the real CLI, with the variables exported so far. */
  private async substitute(source: string): Promise<string> {
    const tokens = tokenize(source);
    const words = tokens.slice(0, 4).map((token) => literalWord(token));
    if (words.join(' ') !== 'node bin/resapi.js sign --secret-env' || tokens.length !== 7 || !isOperator(tokens[5], '<')) {
      throw new SyntaxError(`the tour's shell does not run $(${source})`);
    }
    const child = spawn(process.execPath, [BIN, 'sign', '--secret-env', literalWord(tokens[4])], { cwd: REPO, env: { ...process.env, ...Object.fromEntries(this.variables) }, stdio: ['pipe', 'pipe', 'inherit'] });
    child.stdin.end(readFileSync(join(this.cwd, literalWord(tokens[6]))));
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    const [code] = (await once(child, 'exit')) as [number | null];
    assert.equal(code, 0, `resapi sign exited with ${code}`);
    return out;
  }
}

function isOperator(token: Token | undefined, operator: string): boolean {
  return token?.kind === 'operator' && token.operator === operator;
}

/** The real curl, when RESAPI_TOUR_CURL=1: it writes header lines with CRLF, which a terminal shows as the emulation's LF. */
async function realCurl(args: readonly string[], cwd: string): Promise<string> {
  const child = spawn('curl', args, { cwd, stdio: ['ignore', 'pipe', 'inherit'] });
  const chunks: Buffer[] = [];
  child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
  const [code] = (await once(child, 'exit')) as [number | null];
  assert.equal(code, 0, `curl exited with ${code}`);
  const printed = Buffer.concat(chunks).toString('utf8');
  const split = printed.indexOf('\r\n\r\n');
  return split === -1 ? printed : `${printed.slice(0, split).replace(/\r\n/g, '\n')}\n\n${printed.slice(split + 4)}`;
}

/** Waits until the receiver's inbox lists `count` events, within the delivery deadline. */
async function untilInboxHolds(url: string, count: number): Promise<void> {
  let seen = 0;
  await eventually(
    `${count} deliveries in ${url}/$inbox`,
    async () => {
      seen = ((await (await fetch(`${url}/$inbox`)).json()) as { value: unknown[] }).value.length;
      return seen >= count;
    },
    { deadlineMs: DELIVERY_DEADLINE_MS, detail: () => `it lists ${seen}` },
  );
}
