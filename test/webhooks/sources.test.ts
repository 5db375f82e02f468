// Receiving sources (lib/webhooks/sources.ts, CONVENTIONS.md#receiving-sources): their names, the
// secrets start() takes for them, and the lines the start says about them: one per source without a
// secret (naming its variable) and one per source with a short secret (naming the source, never a secret).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_CONFIG, parseConfig, type Config } from '../../lib/config.js';
import { missingSecretLines, receivingSources, shortSecretLines, sourceSecrets } from '../../lib/webhooks/sources.js';

function configOf(input: unknown): Config {
  const parsed = parseConfig(input);
  if (!parsed.ok) throw new TypeError(parsed.message);
  return parsed.config;
}

const CONFIG = configOf({
  webhooks: {
    sources: [
      { path: '/webhooks/stripe', scheme: 'stripe', secretsEnv: 'STRIPE_WEBHOOK_SECRETS' },
      { path: '/webhooks', scheme: 'resapi', secretsEnv: 'RESAPI_WEBHOOK_SECRETS' },
    ],
  },
});

describe('receivingSources', () => {
  it('should name /webhooks "webhooks" and /webhooks/<name> "<name>", and the default receiver "webhooks" wherever it is', () => {
    assert.deepEqual(receivingSources(CONFIG).map((source) => [source.name, source.path]), [['stripe', '/webhooks/stripe'], ['webhooks', '/webhooks']]);
    const moved = configOf({ webhooks: { path: '/hooks/in' } });
    assert.deepEqual(receivingSources(moved), [{ name: 'webhooks', path: '/hooks/in', scheme: 'resapi', secretsEnv: 'RESAPI_WEBHOOK_SECRETS' }]);
    assert.equal(receivingSources(DEFAULT_CONFIG)[0]?.name, 'webhooks');
  });
});

describe('sourceSecrets', () => {
  const sources = receivingSources(CONFIG);

  it('should give an array to the first source and a record to each source it names', () => {
    assert.deepEqual([...sourceSecrets(['a'], sources)], [['stripe', ['a']]]);
    assert.deepEqual([...sourceSecrets({ webhooks: ['b', 'c'], stripe: ['d'] }, sources)], [['webhooks', ['b', 'c']], ['stripe', ['d']]]);
    assert.equal(sourceSecrets(undefined, sources).size, 0);
  });

  it('should refuse an unknown source, an empty secret, a third secret and another shape, naming the key', () => {
    assert.throws(() => sourceSecrets({ github: ['x'] }, sources), /webhookSecrets: no receiving source is named "github" \(the sources: "stripe", "webhooks"\)/);
    assert.throws(() => sourceSecrets({ stripe: ['x', ''] }, sources), /webhookSecrets\.stripe: secret 2 is empty/);
    assert.throws(() => sourceSecrets({ stripe: ['x', 'y', 'z'] }, sources), /webhookSecrets\.stripe: at most two secrets/);
    assert.throws(() => sourceSecrets(['x', 'y', 'z'], sources), /^TypeError: webhookSecrets: at most two secrets/);
    assert.throws(() => sourceSecrets('x' as unknown as string[], sources), /webhookSecrets: must be an array of strings, or an object/);
  });
});

describe('the start-up lines about secrets', () => {
  const sources = receivingSources(CONFIG);

  it('should say once per source without a secret that it answers 503, naming its variable', () => {
    assert.deepEqual(missingSecretLines(sources, new Map([['webhooks', ['a-long-enough-secret']]])), [
      'the webhook source stripe at /webhooks/stripe answers 503: no secret is configured (STRIPE_WEBHOOK_SECRETS)',
    ]);
  });

  it('should warn once per source with a short secret, naming the source and the role, never the secret', () => {
    const lines = shortSecretLines(sources, new Map([['stripe', ['qq-1', 'qq-2']], ['webhooks', ['0123456789abcdef', 'qq-3']]]));
    assert.equal(lines.length, 2);
    assert.match(lines[0] as string, /^both the current and the previous webhook secret of the source stripe are shorter than 16 bytes/);
    assert.match(lines[1] as string, /^the previous webhook secret is shorter than 16 bytes/);
    assert.doesNotMatch(lines.join('\n'), /qq-/);
  });
});
