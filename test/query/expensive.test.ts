// Tests for lib/query/expensive.ts: the slots expensive filters share, and a plan that takes one once
// its filter work passes EXPENSIVE_STEPS (CONVENTIONS.md#filter-errors-and-budget).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { EXPENSIVE_STEPS, FilterSlots, limitExpensive } from '../../lib/query/expensive.js';
import type { QueryPlan } from '../../lib/query/plan.js';

/** A plan whose every match costs `stepsPerRow` steps of filter work. */
function costlyPlan(stepsPerRow: number): QueryPlan {
  let work = 0;
  return {
    query: { conditions: [], orderby: [], count: false },
    matches: () => {
      work += stepsPerRow;
      return true;
    },
    work: () => work,
    project: (record) => record.doc,
    equalities: [],
  };
}

describe('FilterSlots', () => {
  it('should hand out at most `limit` slots, and take each back once however often it is released', () => {
    const slots = new FilterSlots(2);
    const first = slots.acquire();
    assert.ok(first !== undefined && slots.acquire() !== undefined);
    assert.equal(slots.acquire(), undefined);
    first();
    first();
    assert.equal(slots.taken, 1);
    assert.ok(slots.acquire() !== undefined);
    assert.equal(slots.acquire(), undefined);
  });

  it('should refuse a limit that is not a positive integer', () => {
    assert.throws(() => new FilterSlots(0), /positive integer/);
  });
});

describe('limitExpensive', () => {
  it('should take no slot while the work stays under EXPENSIVE_STEPS', () => {
    const slots = new FilterSlots(1);
    const limited = limitExpensive(costlyPlan(EXPENSIVE_STEPS / 4), slots);
    for (let row = 0; row < 3; row++) assert.equal(limited.plan.matches({}), true);
    assert.equal(slots.taken, 0);
  });

  it('should take a slot once the work passes EXPENSIVE_STEPS, keep it, and give it back on release', () => {
    const slots = new FilterSlots(1);
    const limited = limitExpensive(costlyPlan(EXPENSIVE_STEPS / 2), slots);
    limited.plan.matches({});
    assert.equal(slots.taken, 0);
    limited.plan.matches({});
    assert.equal(slots.taken, 1);
    limited.plan.matches({});
    assert.equal(slots.taken, 1);
    limited.release();
    assert.equal(slots.taken, 0);
  });

  it('should throw FiltersBusy when the work passes EXPENSIVE_STEPS and every slot is taken', () => {
    const slots = new FilterSlots(1);
    const held = slots.acquire();
    const limited = limitExpensive(costlyPlan(EXPENSIVE_STEPS), slots);
    assert.throws(() => limited.plan.matches({}), { name: 'FiltersBusy' });
    limited.release();
    assert.equal(slots.taken, 1, 'the held slot is not released by a plan that never had it');
    held?.();
  });
});
