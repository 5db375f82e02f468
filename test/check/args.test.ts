// Tests for the flags of `resapi check` (lib/cli/args.ts, CONVENTIONS.md#conformance-checker): each
// one parsed in both forms, the values checked before anything is sent (a header that is no field, an
// unknown check or section, a timeout out of range, a collection that is no name, a scheme resapi does
// not know), and an unknown flag refused with the list of the known ones.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CHECK_FLAGS, CHECK_HELP, parseArgs, type CheckArgs } from '../../lib/cli/args.js';

const URL_ = 'http://127.0.0.1:3000';

function parsed(argv: readonly string[]): CheckArgs {
  const result = parseArgs(['check', URL_, ...argv]);
  assert.ok(result.ok && result.command === 'check', JSON.stringify(result));
  return result.check;
}

function refusal(argv: readonly string[]): string {
  const result = parseArgs(['check', URL_, ...argv]);
  assert.equal(result.ok, false, argv.join(' '));
  return result.ok ? '' : result.message;
}

describe('resapi check flags', () => {
  it('should take every flag, a value as the next argument or after =', () => {
    const argv = [
      '--json', '--verbose', '--junit', 'out/check.xml', '--only', 'resources,conditional/replace', '--skip=paging',
      '--header', 'X-Tenant: acme', '--header=X-Trace:t-1', '--api-key-env', 'KEY', '--collection', 'scratch',
      '--timeout=2500', '--webhook-secret-env', 'WH', '--webhook-path', '/webhooks/github', '--webhook-scheme', 'github',
      '--docs-base', 'https://example.org/CONVENTIONS.md',
    ];
    assert.deepEqual(parsed(argv), {
      baseUrl: URL_,
      json: true,
      verbose: true,
      junit: 'out/check.xml',
      only: ['resources', 'conditional/replace'],
      skip: ['paging'],
      headers: [['X-Tenant', 'acme'], ['X-Trace', 't-1']],
      apiKeyEnv: 'KEY',
      collection: 'scratch',
      timeoutMs: 2500,
      webhookSecretEnv: 'WH',
      webhookPath: '/webhooks/github',
      webhookScheme: 'github',
      docsBase: 'https://example.org/CONVENTIONS.md',
    });
  });

  it('should leave out what was not given', () => {
    assert.deepEqual(parsed([]), { baseUrl: URL_, json: false });
  });

  it('should refuse a header that is not one field line, or that the checker sets itself', () => {
    for (const header of ['X-Tenant', 'X Tenant: a', ': a', 'X-Tenant:', 'X-Tenant: a\nX-Evil: b', 'X-Tenant: a\u0000']) {
      assert.match(refusal(['--header', header]), /^--header takes 'Name: value'/, JSON.stringify(header));
    }
    for (const name of ['Host', 'content-length', 'Transfer-Encoding', 'Connection']) {
      assert.match(refusal(['--header', `${name}: x`]), new RegExp(`^--header cannot set ${name}`), name);
    }
    assert.match(refusal(['--header', 'X-A: 1', '--header', 'x-a: 2']), /^--header x-a given twice/);
    assert.match(refusal(['--header', 'Authorization: Bearer t', '--api-key-env', 'KEY']), /both set the credentials/);
  });

  it('should refuse a check or section that does not exist, naming every one', () => {
    assert.match(refusal(['--only', 'paging/next-link, nope']), /^--only: no check or section is named paging\/next-link, nope \(sections: /);
    assert.match(refusal(['--skip', 'webhook']), /^--skip: no check or section is named webhook /);
    assert.match(refusal(['--only', ',']), /^--only needs a value/);
  });

  it('should refuse a timeout, a collection or a scheme it cannot use', () => {
    for (const timeout of ['0', '-5', '1.5', '600001', 'soon', '1e3']) {
      assert.match(refusal(['--timeout', timeout]), /^--timeout must be a whole number of milliseconds from 1 to 600000$/, timeout);
    }
    for (const name of ['1st', '$bulk', 'a/b', 'x'.repeat(60)]) assert.match(refusal(['--collection', name]), /^--collection must be a collection name/, name);
    assert.equal(parsed(['--collection', 'x'.repeat(59)]).collection, 'x'.repeat(59));
    assert.match(refusal(['--webhook-scheme', 'Stripe']), /^--webhook-scheme must be one of resapi, standard, github, stripe, not 'Stripe'$/);
  });

  it('should refuse a flag given twice, a switch with a value, and a value flag without one', () => {
    assert.match(refusal(['--junit', 'a.xml', '--junit', 'b.xml']), /^--junit given twice$/);
    assert.match(refusal(['--verbose=yes']), /^--verbose takes no value$/);
    assert.match(refusal(['--timeout']), /^--timeout needs a value$/);
    assert.match(refusal(['--collection', '--json']), /^--collection needs a value$/);
  });

  it('should refuse an unknown flag with the list of every known one', () => {
    const message = refusal(['--insecure']);
    assert.match(message, /^unknown option '--insecure' for resapi check; known flags: --json, --junit FILE, /);
    for (const flag of CHECK_FLAGS) assert.ok(message.includes(flag), flag);
  });

  it('should describe every flag in resapi check --help', () => {
    for (const flag of CHECK_FLAGS) assert.ok(CHECK_HELP.includes(flag.split(' ')[0] as string), flag);
    for (const word of ['BLOCKED', 'verdict', 'blockedBy', 'prerequisites', 'testsuite', 'blocked by']) assert.ok(CHECK_HELP.includes(word), word);
  });
});
