// Which event kinds a subscription's patterns take (lib/webhooks/subscriptions.ts `wants`,
// CONVENTIONS.md#subscriptions): exact kinds, `<collection>.*`, `*`; and never `subscription.disabled`
// by anything but its exact name.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { subscriptionOf, wants, type Change, type Subscription } from '../../lib/webhooks/subscriptions.js';

function subscription(events: string[]): Subscription {
  const made = subscriptionOf({ id: 's', url: 'http://127.0.0.1:9/hook', events, status: 'active' });
  assert.ok(made !== undefined);
  return made;
}

describe('wants', () => {
  it('should take every change of a collection for `<collection>.*` and of every collection for `*`', () => {
    for (const change of ['created', 'replaced', 'deleted', 'restored'] as const) {
      assert.equal(wants(subscription(['items.*']), 'items', change), true);
      assert.equal(wants(subscription(['*']), 'orders', change), true);
    }
  });

  it('should take an exact kind and nothing else of the collection', () => {
    const exact = subscription(['items.created']);
    assert.equal(wants(exact, 'items', 'created'), true);
    const others: Change[] = ['replaced', 'deleted', 'restored'];
    for (const change of others) assert.equal(wants(exact, 'items', change), false);
  });

  it('should not take a collection whose name only starts or ends like the pattern', () => {
    assert.equal(wants(subscription(['items.*']), 'item', 'created'), false);
    assert.equal(wants(subscription(['items.*']), 'itemsx', 'created'), false);
    assert.equal(wants(subscription(['items.created']), 'item', 'created'), false);
    assert.equal(wants(subscription(['xitems.created', 'items.createdx']), 'items', 'created'), false);
  });

  it('should not take a change of an item for subscription.disabled, even of a collection of that name', () => {
    assert.equal(wants(subscription(['subscription.disabled']), 'subscription', 'deleted'), false);
    assert.equal(wants(subscription(['subscription.disabled', 'subscription.deleted']), 'subscription', 'deleted'), true);
  });
});
