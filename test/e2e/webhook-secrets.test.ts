// End to end: the real binary's checks of RESAPI_WEBHOOK_SECRETS at start (CONVENTIONS.md#secrets).
// A secret shorter than 16 bytes (UTF-8 bytes; the decoded bytes after `whsec_`) still starts, because
// providers' published test vectors use short secrets, but one warning line names the rule, however
// many secrets are short. An empty secret refuses the start. The secret itself is never printed.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { webhookSignature } from '../../lib/protocol/signature.js';
import { runBinary, startBinary } from '../support/binary.js';
import { request } from '../support/http.js';

/** Starts the binary with these secrets, stops it, and returns the stderr lines about the secrets' length. */
async function warningsFor(secrets: string): Promise<string[]> {
  const server = await startBinary(['--memory'], { RESAPI_WEBHOOK_SECRETS: secrets });
  const closed = once(server.child, 'close');
  assert.equal(await server.stop(), 0);
  await closed; // every byte of stderr has been read
  return server.stderr().split('\n').filter((line) => /16 bytes/.test(line));
}

const whsec = (bytes: number): string => `whsec_${Buffer.alloc(bytes, 7).toString('base64')}`;

describe('RESAPI_WEBHOOK_SECRETS at start', () => {
  it('should start with one warning line naming the rule when a secret is shorter than 16 bytes', async () => {
    const short = 'test-secret';
    const server = await startBinary(['--memory'], { RESAPI_WEBHOOK_SECRETS: short });
    const closed = once(server.child, 'close');
    try {
      // It still receives: a provider's test vector signed with a short secret verifies.
      const body = JSON.stringify({ id: 'evt-short', event: 'order.created' });
      const headers = { 'Content-Type': 'application/json', 'X-Signature': webhookSignature(body, short) };
      assert.equal((await request(server.url, '/webhooks', { method: 'POST', headers, body })).status, 200);
    } finally {
      assert.equal(await server.stop(), 0);
    }
    await closed;
    const lines = server.stderr().split('\n').filter((line) => /16 bytes/.test(line));
    assert.equal(lines.length, 1, server.stderr());
    assert.match(lines[0] as string, /"level":"warn"/);
    assert.match(lines[0] as string, /CONVENTIONS\.md#secrets/);
    assert.doesNotMatch(server.stderr(), new RegExp(short));
  });

  it('should say it in one line when both the current and the previous secret are short', async () => {
    const lines = await warningsFor('short-one,short-two');
    assert.equal(lines.length, 1, lines.join('\n'));
    assert.match(lines[0] as string, /current.*previous|both/);
  });

  it('should count the decoded bytes of a whsec_ secret, and UTF-8 bytes, not characters', async () => {
    assert.equal((await warningsFor(whsec(12))).length, 1, 'whsec_ + 12 bytes is 22 characters but 12 bytes');
    assert.deepEqual(await warningsFor(whsec(24)), []);
    assert.deepEqual(await warningsFor('é'.repeat(8)), [], '8 characters, 16 UTF-8 bytes');
    assert.deepEqual(await warningsFor('0123456789abcdef'), []);
  });

  it('should refuse to start, exit 1, when a listed secret is empty', async () => {
    for (const secrets of ['a-long-enough-secret,', ',a-long-enough-secret', ' , a-long-enough-secret']) {
      const run = await runBinary(['serve', '--port', '0', '--memory'], { RESAPI_WEBHOOK_SECRETS: secrets });
      assert.equal(run.code, 1, `${JSON.stringify(secrets)}: ${run.stderr}`);
      assert.match(run.stderr, /RESAPI_WEBHOOK_SECRETS.*empty/, JSON.stringify(secrets));
      assert.match(run.stderr, /CONVENTIONS\.md#secrets/);
      assert.equal(run.stdout, '');
    }
  });
});
