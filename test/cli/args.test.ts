// Tests for lib/cli/args.ts: the command lines of `resapi serve`, `sign` and `check`
// (CONVENTIONS.md#command-line, CONVENTIONS.md#conformance-checker).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CHECK_HELP, SERVE_HELP, USAGE, parseArgs, splitList } from '../../lib/cli/args.js';
import type { ParsedArgs, ServeArgs } from '../../lib/cli/args.js';

function serve(argv: readonly string[]): ServeArgs {
  const parsed = parseArgs(['serve', ...argv]);
  assert.ok(parsed.ok && parsed.command === 'serve', JSON.stringify(parsed));
  return parsed.serve;
}

function failure(argv: readonly string[]): string {
  const parsed: ParsedArgs = parseArgs(argv);
  assert.equal(parsed.ok, false, JSON.stringify(parsed));
  return parsed.ok ? '' : parsed.message;
}

describe('parseArgs', () => {
  it('should apply the defaults of CONVENTIONS.md#command-line', () => {
    assert.deepEqual(serve([]), { host: '127.0.0.1', port: 3000, dataDir: 'data/store', memory: false, noCacheMode: false });
  });

  it('should leave optional settings out rather than set them to undefined', () => {
    const args = serve([]);
    for (const key of ['baseUrl', 'config', 'seed', 'handlers']) assert.equal(Object.hasOwn(args, key), false, key);
  });

  it('should read every value flag, separated by a space', () => {
    const args = serve([
      '--host', '0.0.0.0',
      '--port', '8080',
      '--data-dir', '/tmp/d',
      '--base-url', 'https://api.example.com/v1',
      '--config', 'c.json',
      '--seed', 'data/sample',
      '--handlers', 'h.mjs',
    ]);
    assert.deepEqual(args, {
      host: '0.0.0.0',
      port: 8080,
      dataDir: '/tmp/d',
      baseUrl: 'https://api.example.com/v1',
      config: 'c.json',
      seed: 'data/sample',
      handlers: 'h.mjs',
      memory: false,
      noCacheMode: false,
    });
  });

  it('should read every value flag in the --flag=value form', () => {
    const args = serve([
      '--host=::1',
      '--port=0',
      '--data-dir=d',
      '--base-url=http://localhost:3000',
      '--config=c.json',
      '--seed=db.json',
      '--handlers=h.mjs',
    ]);
    assert.deepEqual(args, {
      host: '::1',
      port: 0,
      dataDir: 'd',
      baseUrl: 'http://localhost:3000',
      config: 'c.json',
      seed: 'db.json',
      handlers: 'h.mjs',
      memory: false,
      noCacheMode: false,
    });
  });

  it('should keep "=" inside a value given in the --flag=value form', () => {
    assert.equal(serve(['--data-dir=a=b']).dataDir, 'a=b');
  });

  it('should read the boolean flags', () => {
    assert.equal(serve(['--memory']).memory, true);
    assert.equal(serve(['--no-cache-mode']).noCacheMode, true);
    const both = serve(['--no-cache-mode', '--memory']);
    assert.equal(both.memory && both.noCacheMode, true);
  });

  it('should refuse a value given to a boolean flag', () => {
    assert.match(failure(['serve', '--memory=true']), /--memory takes no value/);
    assert.match(failure(['serve', '--no-cache-mode=1']), /--no-cache-mode takes no value/);
  });

  it('should accept flags in any order', () => {
    assert.deepEqual(serve(['--memory', '--port', '1', '--host', 'h']), serve(['--host', 'h', '--port=1', '--memory']));
  });

  it('should refuse an unknown flag, naming it', () => {
    assert.match(failure(['serve', '--verbose']), /unknown option '--verbose'/);
    assert.match(failure(['serve', '--bogus=1']), /unknown option/);
    assert.match(failure(['serve', '-p', '80']), /unknown option '-p'/);
    assert.match(failure(['serve', 'extra']), /unknown option 'extra'/);
  });

  it('should refuse a value flag without a value', () => {
    for (const flag of ['--host', '--port', '--data-dir', '--base-url', '--config', '--seed', '--handlers', '--forward']) {
      assert.match(failure(['serve', flag]), new RegExp(`${flag} needs a value`));
      assert.match(failure(['serve', `${flag}=`]), new RegExp(`${flag} needs a value`));
    }
  });

  it('should not take the next flag as the value of a flag whose value is missing', () => {
    // `serve --seed --memory` must not seed from a file named "--memory" into the default data dir.
    assert.match(failure(['serve', '--seed', '--memory']), /--seed needs a value/);
    assert.match(failure(['serve', '--data-dir', '--no-cache-mode']), /--data-dir needs a value/);
  });

  it('should accept ports 0 to 65535', () => {
    assert.equal(serve(['--port', '0']).port, 0);
    assert.equal(serve(['--port', '65535']).port, 65535);
    assert.equal(serve(['--port', '080']).port, 80);
  });

  it('should refuse a port that is not an integer from 0 to 65535', () => {
    for (const port of ['65536', '99999', '-1', '1.5', 'abc', '3000x', ' 80', '1e3', '0x50', '123456']) {
      assert.match(failure(['serve', '--port', port]), /--port must be an integer from 0 to 65535/, port);
    }
  });

  it('should refuse a flag given twice, in either form', () => {
    assert.match(failure(['serve', '--port', '1', '--port', '2']), /--port given twice/);
    assert.match(failure(['serve', '--host=a', '--host', 'b']), /--host given twice/);
    assert.match(failure(['serve', '--seed', 'a', '--seed=a']), /--seed given twice/);
  });

  it('should accept an absolute http(s) base URL, with or without a path', () => {
    for (const url of ['http://localhost:3000', 'https://api.example.com', 'https://api.example.com/v1/', 'HTTPS://EXAMPLE.COM']) {
      assert.equal(serve(['--base-url', url]).baseUrl, url);
    }
  });

  it('should read --forward as an absolute http(s) URL, a query included (CONVENTIONS.md#forwarding)', () => {
    for (const url of ['http://127.0.0.1:3000/webhooks', 'https://app.example.test/hooks?from=resapi', 'http://[::1]:4000/']) {
      assert.equal(serve(['--forward', url]).forward, url);
      assert.equal(serve([`--forward=${url}`]).forward, url);
    }
    assert.equal(Object.hasOwn(serve([]), 'forward'), false);
  });

  it('should refuse a --forward that is relative, not http(s), or carries credentials or a fragment', () => {
    const long = `http://127.0.0.1/${'a'.repeat(2048)}`;
    for (const url of ['127.0.0.1:3000/webhooks', '/webhooks', 'ftp://127.0.0.1/', 'http://u:p@127.0.0.1/', 'http://127.0.0.1/#f', long]) {
      assert.match(failure(['serve', '--forward', url]), /--forward must be an absolute http or https URL/, url);
    }
    assert.match(failure(['serve', '--forward', 'http://a/', '--forward', 'http://b/']), /--forward given twice/);
  });

  it('should refuse a base URL that is relative, not http(s), or has a query or fragment', () => {
    for (const url of ['example.com', '/v1', 'ftp://example.com', 'http://', 'http://x/?a=1', 'http://x#f', 'http://x y']) {
      assert.match(failure(['serve', '--base-url', url]), /--base-url must be an absolute http\(s\) URL/, url);
    }
  });

  it('should ask for help with no command, --help, -h or help', () => {
    for (const argv of [[], ['--help'], ['-h'], ['help']]) {
      assert.deepEqual(parseArgs(argv), { ok: true, command: 'help', text: USAGE });
    }
  });

  it('should ask for the version with --version or -v', () => {
    assert.deepEqual(parseArgs(['--version']), { ok: true, command: 'version' });
    assert.deepEqual(parseArgs(['-v']), { ok: true, command: 'version' });
  });

  it('should refuse an unknown command, naming it', () => {
    assert.match(failure(['start']), /unknown command 'start'/);
    assert.match(failure(['--port', '80']), /unknown command '--port'/);
  });

  it('should not change the argv it is given', () => {
    const argv = ['serve', '--port', '1'];
    parseArgs(argv);
    assert.deepEqual(argv, ['serve', '--port', '1']);
  });
});

describe('resapi sign', () => {
  it('should take the name of the environment variable that holds the secret', () => {
    assert.deepEqual(parseArgs(['sign', '--secret-env', 'SIGNING_SECRET']), { ok: true, command: 'sign', secretEnv: 'SIGNING_SECRET' });
    assert.deepEqual(parseArgs(['sign', '--secret-env=S']), { ok: true, command: 'sign', secretEnv: 'S' });
  });

  it('should refuse a missing name, a name that is no variable name, and anything more', () => {
    for (const argv of [['sign'], ['sign', '--secret-env'], ['sign', '--secret-env', 'not a name'], ['sign', '--secret-env', 'S', 'extra'], ['sign', '--secret', 'abc']]) {
      assert.match(failure(argv), /usage: resapi sign --secret-env NAME/, argv.join(' '));
    }
  });
});

describe('resapi check', () => {
  it('should take the base URL and every flag, in either form and any order', () => {
    assert.deepEqual(parseArgs(['check', 'http://127.0.0.1:3000']), { ok: true, command: 'check', check: { baseUrl: 'http://127.0.0.1:3000', json: false } });
    assert.deepEqual(parseArgs(['check', '--json', '--webhook-secret-env', 'WH', 'https://api.example.com/v1', '--api-key-env=KEY', '--webhook-path', '/hooks', '--only', 'paging/, errors/']), {
      ok: true,
      command: 'check',
      check: { baseUrl: 'https://api.example.com/v1', json: true, webhookSecretEnv: 'WH', apiKeyEnv: 'KEY', webhookPath: '/hooks', only: ['paging/', 'errors/'] },
    });
  });

  it('should refuse a missing or non-http(s) base URL, a second URL, a secret given inline and unknown flags', () => {
    assert.match(failure(['check']), /needs the base URL/);
    assert.match(failure(['check', 'ftp://example.com']), /absolute http\(s\) URL/);
    assert.match(failure(['check', 'http://a.example?x=1']), /absolute http\(s\) URL/);
    assert.match(failure(['check', 'http://a.example', 'http://b.example']), /unknown option 'http:\/\/b.example'/);
    assert.match(failure(['check', 'http://a.example', '--webhook-secret-env', 's3cret value']), /name of an environment variable/);
    assert.match(failure(['check', 'http://a.example', '--webhook-secret', 'x']), /unknown option '--webhook-secret'/);
    assert.match(failure(['check', 'http://a.example', '--json=yes']), /--json takes no value/);
    assert.match(failure(['check', 'http://a.example', '--webhook-path', 'hooks']), /must start with \//);
    assert.match(failure(['check', 'http://a.example', '--only']), /--only needs a value/);
  });

  it('should take --docs-base, the URL of the conventions document, in either form', () => {
    const docs = 'https://example.org/resapi/CONVENTIONS.md';
    for (const argv of [['--docs-base', docs], [`--docs-base=${docs}`]]) {
      assert.deepEqual(parseArgs(['check', 'http://a.example', ...argv]), { ok: true, command: 'check', check: { baseUrl: 'http://a.example', json: false, docsBase: docs } });
    }
    const withQuery = 'http://docs.example:8080/CONVENTIONS.md?plain=0';
    assert.deepEqual(parseArgs(['check', 'http://a.example', '--docs-base', withQuery]), { ok: true, command: 'check', check: { baseUrl: 'http://a.example', json: false, docsBase: withQuery } });
  });

  it('should refuse a --docs-base that is not an absolute http(s) URL, or that has a fragment', () => {
    const refusal = /^--docs-base must be the absolute http\(s\) URL of CONVENTIONS\.md, without a fragment$/;
    for (const value of ['CONVENTIONS.md', '/resapi/CONVENTIONS.md', 'ftp://example.org/CONVENTIONS.md', 'https://', 'https:///CONVENTIONS.md', 'https://example.org/CONVENTIONS.md#etags', 'https://example.org/my docs/CONVENTIONS.md']) {
      assert.match(failure(['check', 'http://a.example', '--docs-base', value]), refusal, value);
    }
    assert.match(failure(['check', 'http://a.example', '--docs-base']), /--docs-base needs a value/);
    assert.match(failure(['check', 'http://a.example', '--docs-base=']), /--docs-base needs a value/);
    assert.match(failure(['check', 'http://a.example', '--docs-base', 'https://a.example/C.md', '--docs-base', 'https://b.example/C.md']), /--docs-base given twice/);
  });

  it('should answer --help with the check help, which names every flag', () => {
    assert.deepEqual(parseArgs(['check', '--help']), { ok: true, command: 'help', text: CHECK_HELP });
    for (const flag of ['--json', '--webhook-secret-env', '--webhook-path', '--api-key-env', '--only', '--docs-base']) assert.ok(CHECK_HELP.includes(flag), flag);
    // What --json holds and what --docs-base adds are written down.
    for (const field of ['anchor', 'rfc', 'ruleUrl', 'source']) assert.match(CHECK_HELP, new RegExp(`\\b${field}\\b`), field);
    assert.match(CHECK_HELP, /CONVENTIONS\.md/);
    assert.match(USAGE, /resapi check BASE_URL/);
  });
});

describe('USAGE and SERVE_HELP', () => {
  const words = ['--host', '--port', '--data-dir', '--base-url', '--config', '--memory', '--no-cache-mode', '--seed', '--handlers', '--forward', 'RESAPI_API_KEYS', 'RESAPI_WEBHOOK_SECRETS'];

  it('should mention every flag and both environment variables', () => {
    for (const word of words) assert.ok(USAGE.includes(word), word);
  });

  it('should describe every serve flag on a line of its own in `resapi serve --help`', () => {
    for (const word of words.filter((flag) => flag.startsWith('--'))) assert.match(SERVE_HELP, new RegExp(`^  ${word} .*\\S`, 'm'), word);
    assert.deepEqual(parseArgs(['serve', '--help']), { ok: true, command: 'help', text: SERVE_HELP });
    assert.deepEqual(parseArgs(['serve', '--port', '1', '-h']), { ok: true, command: 'help', text: SERVE_HELP });
  });

  it('should suggest --seed for a JSON file given where a flag belongs, as json-server is started', () => {
    assert.match(failure(['serve', 'db.json']), /use --seed db\.json/);
  });
});

describe('splitList', () => {
  it('should give an empty list for an unset or empty variable', () => {
    assert.deepEqual(splitList(undefined), []);
    assert.deepEqual(splitList(''), []);
    assert.deepEqual(splitList(' , ,'), []);
  });

  it('should split on commas, trim, and drop empty members', () => {
    assert.deepEqual(splitList('a,b'), ['a', 'b']);
    assert.deepEqual(splitList(' current , previous ,, '), ['current', 'previous']);
  });

  it('should keep a single value whole', () => {
    assert.deepEqual(splitList('only-key'), ['only-key']);
  });
});
