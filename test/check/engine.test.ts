// Tests for the checker's engine (lib/check/engine.ts), its prerequisites (lib/check/prerequisites.ts)
// and --only/--skip (lib/check/select.ts), with checks made up here that send nothing: one root cause
// is one FAIL and what needs it is BLOCKED by it (through blocked prerequisites too), a prerequisite
// runs once however many checks need it, a skipped one skips what needs it for the same reason, a
// check that uses what it did not declare is a mistake of the checker (it throws), and a server that
// stops answering blocks the rest of the run. Then the real catalogue: every prerequisite is a check
// that exists, and none needs itself.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { CHECKS } from '../../lib/check/checks.js';
import { check, type Declaration } from '../../lib/check/define.js';
import { CheckDeclarationError, Engine } from '../../lib/check/engine.js';
import { PREREQUISITES, type PrerequisiteName } from '../../lib/check/prerequisites.js';
import { Probe } from '../../lib/check/probe.js';
import type { CheckOutcome } from '../../lib/check/run.js';
import { select, unknownSelectors } from '../../lib/check/select.js';
import { RunState } from '../../lib/check/state.js';
import { CheckFailed, CheckSkipped, type Check, type CheckContext, type Condition, type Section } from '../../lib/check/types.js';

type Body = (c: CheckContext) => Promise<void>;
const pass: Body = async () => {};

/** A made-up check with the id `id` (section/name), needing `needs`. */
function fake(id: string, body: Body, declaration: Omit<Declaration, 'anchor'> = {}): Check {
  const [section, name] = id.split('/') as [Section, string];
  return check(section, name, { anchor: 'principles', ...declaration }, `the rule of ${id}`, body);
}

/** Runs `chosen` (all of `checks` by default) through an engine on a server that is never reached. */
async function settle(checks: readonly Check[], options: { excluded?: string[]; given?: Condition[]; url?: string; chosen?: Check[] } = {}): Promise<Map<string, CheckOutcome>> {
  const probe = new Probe(options.url ?? 'http://127.0.0.1:9', { maxRequests: 100, timeoutMs: 2000, headers: {} });
  const state = new RunState(probe, { tag: 'feed', collection: 'rcheck-feed', checkBudget: 90 });
  const engine = new Engine(checks, new Set(options.excluded ?? []), state, probe, { given: new Set(options.given ?? []), docsBase: undefined, verbose: false, webhook: undefined });
  for (const one of options.chosen ?? checks) await engine.settle(one);
  return new Map(engine.outcomes(checks).map((outcome) => [outcome.id, outcome]));
}

function verdicts(outcomes: Map<string, CheckOutcome>): Record<string, string> {
  return Object.fromEntries([...outcomes].map(([id, outcome]) => [id, outcome.blockedBy === undefined ? outcome.verdict : `${outcome.verdict} by ${outcome.blockedBy}`]));
}

const failing: Body = async () => {
  throw new CheckFailed('expected 201, got 200');
};

describe('Engine', () => {
  it('should report one FAIL for a root cause and block what needs it, through blocked prerequisites, naming the root', async () => {
    const outcomes = await settle([
      fake('resources/put-create', failing),
      fake('resources/get-item', pass, { needs: ['item'] }),
      fake('paging/listing', pass, { needs: ['item'] }),
      fake('paging/max-page-size', pass, { needs: ['listing'] }),
      fake('paging/next-link-walk', pass, { needs: ['listing', 'pages'] }),
      fake('resources/envelope', pass),
    ]);
    assert.deepEqual(verdicts(outcomes), {
      'resources/put-create': 'FAIL',
      'resources/get-item': 'BLOCKED by resources/put-create',
      'resources/envelope': 'PASS',
      'paging/listing': 'BLOCKED by resources/put-create',
      'paging/max-page-size': 'BLOCKED by resources/put-create',
      'paging/next-link-walk': 'BLOCKED by resources/put-create',
    });
    const blocked = outcomes.get('paging/next-link-walk');
    assert.equal(blocked?.detail, 'blocked by resources/put-create');
    assert.equal(blocked?.result, 'skip', 'a blocked check keeps the old three-valued result');
    assert.deepEqual(blocked?.prerequisites, ['paging/listing', 'paging/max-page-size']);
  });

  it('should run a prerequisite once however many checks need it, and before them even when listed after', async () => {
    let runs = 0;
    const outcomes = await settle([
      fake('resources/get-item', pass, { needs: ['item'] }),
      fake('resources/content-type', pass, { needs: ['item'] }),
      fake('resources/put-create', async () => {
        runs++;
      }),
    ]);
    assert.equal(runs, 1);
    assert.deepEqual([...outcomes.values()].map((outcome) => outcome.verdict), ['PASS', 'PASS', 'PASS']);
  });

  it('should skip what needs a skipped check for the same reason, and skip before blocking what does not apply', async () => {
    const outcomes = await settle([
      fake('resources/put-create', failing),
      fake('webhooks/accepted', pass, { requires: ['webhook-secret'] }),
      fake('webhooks/duplicate', pass, { needs: ['receiver'] }),
      fake('caching/credentialed-vary-authorization', pass, { needs: ['item'], requires: ['credentials'] }),
      fake('errors/problem-document', async () => {
        throw new CheckSkipped('cannot tell');
      }),
      fake('errors/malformed-json', pass, { needs: ['problem'] }),
    ]);
    assert.equal(outcomes.get('webhooks/accepted')?.detail, 'no receiver secret given (--webhook-secret-env)');
    assert.equal(outcomes.get('webhooks/duplicate')?.verdict, 'SKIP');
    assert.equal(outcomes.get('webhooks/duplicate')?.detail, 'needs webhooks/accepted: no receiver secret given (--webhook-secret-env)');
    assert.equal(outcomes.get('caching/credentialed-vary-authorization')?.verdict, 'SKIP', 'not applicable wins over blocked');
    assert.equal(outcomes.get('errors/malformed-json')?.detail, 'needs errors/problem-document: cannot tell');
  });

  it('should run what a run was given the means for', async () => {
    const outcomes = await settle([fake('webhooks/accepted', pass, { requires: ['webhook-secret'] })], { given: ['webhook-secret'] });
    assert.equal(outcomes.get('webhooks/accepted')?.verdict, 'PASS');
  });

  it('should skip what needs a check left out by --skip, and not report the one left out', async () => {
    const putCreate = fake('resources/put-create', pass);
    const getItem = fake('resources/get-item', pass, { needs: ['item'] });
    const outcomes = await settle([putCreate, getItem], { excluded: [putCreate.id], chosen: [getItem] });
    assert.deepEqual([...outcomes.keys()], ['resources/get-item']);
    assert.equal(outcomes.get('resources/get-item')?.detail, 'needs resources/put-create, left out by --skip');
  });

  it('should report a prerequisite that was not chosen but was needed', async () => {
    const putCreate = fake('resources/put-create', pass);
    const getItem = fake('resources/get-item', pass, { needs: ['item'] });
    const outcomes = await settle([putCreate, getItem, fake('resources/envelope', pass)], { chosen: [getItem] });
    assert.deepEqual([...outcomes.keys()], ['resources/put-create', 'resources/get-item']);
  });

  it('should answer holds() by running the prerequisite once, and never block on it', async () => {
    const seen: boolean[] = [];
    const lenient: Body = async (c) => {
      seen.push(await c.holds('problem'));
    };
    const outcomes = await settle([
      fake('errors/malformed-json', lenient),
      fake('errors/not-an-object', lenient),
      fake('errors/problem-document', failing),
    ]);
    assert.deepEqual(seen, [false, false]);
    assert.deepEqual(verdicts(outcomes), { 'errors/problem-document': 'FAIL', 'errors/malformed-json': 'PASS', 'errors/not-an-object': 'PASS' });
  });

  it('should throw, not judge, when a check uses what it does not declare or asks about its own rule', async () => {
    const items = fake('resources/get-item', async (c) => {
      await c.newItem();
    });
    await assert.rejects(settle([fake('resources/put-create', pass), items]), CheckDeclarationError);
    const listing = fake('paging/filter-eq', async (c) => {
      c.listing();
    });
    await assert.rejects(settle([listing]), { name: 'TypeError', message: /does not declare needs: \['listing'\]/ });
    const itself = fake('errors/problem-document', async (c) => {
      await c.holds('problem');
    });
    await assert.rejects(settle([itself]), { message: /its own rule/ });
  });

  it('should fail the check whose request got no answer, then block the rest when the server is gone', async () => {
    const server = createServer((socket) => socket.destroy());
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const sends: Body = async (c) => {
      server.close();
      await c.send({ method: 'GET', path: '/' });
    };
    const outcomes = await settle([fake('errors/deep-nesting', sends), fake('errors/head', pass), fake('webhooks/accepted', pass, { requires: ['webhook-secret'] })], { url });
    assert.equal(outcomes.get('errors/deep-nesting')?.verdict, 'FAIL');
    assert.match(outcomes.get('errors/deep-nesting')?.detail ?? '', /^no answer: /);
    assert.equal(outcomes.get('errors/head')?.blockedBy, 'errors/deep-nesting');
    assert.match(outcomes.get('errors/head')?.detail ?? '', /^blocked by errors\/deep-nesting \(the server stopped answering: connection refused/);
    assert.equal(outcomes.get('webhooks/accepted')?.verdict, 'SKIP');
  });
});

describe('the prerequisites of the catalogue', () => {
  const byId = new Map(CHECKS.map((entry) => [entry.id, entry]));

  it('should each be a check of the catalogue', () => {
    for (const [name, { check: id }] of Object.entries(PREREQUISITES)) assert.ok(byId.has(id), `${name}: no check ${id}`);
  });

  it('should never lead back to the check that needs them', () => {
    const visit = (id: string, path: readonly string[]): void => {
      assert.ok(!path.includes(id), `a cycle: ${[...path, id].join(' → ')}`);
      for (const name of byId.get(id)?.needs ?? []) visit(PREREQUISITES[name as PrerequisiteName].check, [...path, id]);
    };
    for (const entry of CHECKS) visit(entry.id, []);
  });

  it('should each be used: needed by a check, or asked about', () => {
    const needed = new Set(CHECKS.flatMap((entry) => entry.needs));
    // `problem` and `bulk` are only asked about: holds() for lenient reading, routeOrBlocked for a missing route.
    for (const name of Object.keys(PREREQUISITES)) assert.ok(needed.has(name as PrerequisiteName) || ['problem', 'bulk'].includes(name), name);
  });
});

describe('select', () => {
  const checks = [fake('resources/put-create', pass), fake('resources/get-item', pass), fake('paging/filter-eq', pass)];

  it('should take check ids and sections (with or without the slash)', () => {
    assert.deepEqual(select(checks, ['paging'], undefined).chosen.map((one) => one.id), ['paging/filter-eq']);
    assert.deepEqual(select(checks, ['resources/', 'paging/filter-eq'], undefined).chosen.map((one) => one.id), checks.map((one) => one.id));
    const { chosen, excluded } = select(checks, undefined, ['resources/get-item']);
    assert.deepEqual(chosen.map((one) => one.id), ['resources/put-create', 'paging/filter-eq']);
    assert.deepEqual([...excluded], ['resources/get-item']);
  });

  it('should refuse, naming them all, what is neither a check nor a section', () => {
    assert.deepEqual(unknownSelectors(checks, ['paging', 'paging/next-link', 'nope', 'resources/get-item']), ['paging/next-link', 'nope']);
    assert.throws(() => select(checks, ['paging/next-link'], ['nope']), { name: 'TypeError', message: 'no check or section is named paging/next-link, nope' });
  });
});
