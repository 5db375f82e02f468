// Tests for lib/lifecycle.ts: components start in order and stop in reverse, each drained then
// closed, and one that fails to start or stop cannot keep the others from stopping.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Lifecycle, type Component } from '../lib/lifecycle.js';

function recorder(): { steps: string[]; component(name: string, fail?: 'start' | 'drain' | 'close'): Component } {
  const steps: string[] = [];
  return {
    steps,
    component: (name, fail) => {
      const step = (what: 'start' | 'drain' | 'close') => async (): Promise<void> => {
        steps.push(`${name}.${what}`);
        if (fail === what) throw new Error(`${name} cannot ${what}`);
      };
      return { name, start: step('start'), drain: step('drain'), close: step('close') };
    },
  };
}

describe('Lifecycle', () => {
  it('should start components in order and stop them in reverse, draining each before closing it', async () => {
    const { steps, component } = recorder();
    const lifecycle = new Lifecycle(() => {});
    for (const name of ['store', 'workers', 'http']) lifecycle.add(component(name));
    await lifecycle.start();
    assert.deepEqual(steps.splice(0), ['store.start', 'workers.start', 'http.start']);
    await lifecycle.stop();
    assert.deepEqual(steps, ['http.drain', 'http.close', 'workers.drain', 'workers.close', 'store.drain', 'store.close']);
  });

  it('should stop every component, and rethrow, when one fails to start', async () => {
    const { steps, component } = recorder();
    const lifecycle = new Lifecycle(() => {});
    lifecycle.add(component('store'));
    lifecycle.add(component('http', 'start'));
    lifecycle.add(component('late'));
    await assert.rejects(lifecycle.start(), /http cannot start/);
    assert.deepEqual(steps, ['store.start', 'http.start', 'late.drain', 'late.close', 'http.drain', 'http.close', 'store.drain', 'store.close']);
  });

  it('should log a component that fails to stop and still stop the ones after it', async () => {
    const { steps, component } = recorder();
    const logged: string[] = [];
    const lifecycle = new Lifecycle((_level, message) => void logged.push(message));
    lifecycle.add(component('store'));
    lifecycle.add(component('http', 'drain'));
    await lifecycle.start();
    await lifecycle.stop();
    assert.deepEqual(steps.slice(2), ['http.drain', 'http.close', 'store.drain', 'store.close']);
    assert.deepEqual(logged, ['http failed to drain']);
  });

  it('should stop once however often stop() is called, and refuse components added after start', async () => {
    const { steps, component } = recorder();
    const lifecycle = new Lifecycle(() => {});
    lifecycle.add(component('store'));
    await lifecycle.start();
    assert.throws(() => lifecycle.add(component('late')), TypeError);
    await Promise.all([lifecycle.stop(), lifecycle.stop()]);
    await lifecycle.stop();
    assert.deepEqual(steps, ['store.start', 'store.drain', 'store.close']);
  });
});
