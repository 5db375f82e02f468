// Tests for lib/prometheus.ts: what it writes is Prometheus text format 0.0.4, read back by a strict
// reader (test/support/prometheus.ts) that also refuses what the format forbids.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Counter, Gauge, Histogram, exposition } from '../lib/prometheus.js';
import { parseExposition, sampleValue } from './support/prometheus.js';

describe('exposition', () => {
  it('should write counters, gauges and cumulative histograms the strict reader accepts', () => {
    const counter = new Counter('demo_requests_total', 'Requests.\nSecond line with a \\ backslash.');
    counter.add({ route: 'item', status: '200' });
    counter.add({ route: 'item', status: '200' }, 2);
    counter.add({ route: 'odd "name"\nwith \\ in it', status: '404' });
    const histogram = new Histogram('demo_seconds', 'Durations.', [0.1, 1]);
    for (const value of [0.05, 0.5, 0.5, 5]) histogram.observe({ route: 'item' }, value);
    const gauge = new Gauge('demo_depth', 'Depth.', () => [{ labels: { status: 'dead' }, value: 3 }, { labels: { status: 'ok' }, value: Number.POSITIVE_INFINITY }]);
    const families = parseExposition(exposition([counter, histogram, gauge]));
    assert.equal(sampleValue(families, 'demo_requests_total', 'demo_requests_total', { route: 'item', status: '200' }), 3);
    assert.equal(sampleValue(families, 'demo_requests_total', 'demo_requests_total', { route: 'odd "name"\nwith \\ in it' }), 1);
    assert.deepEqual(
      families.get('demo_seconds')?.samples.map((sample) => [sample.name, sample.labels['le'] ?? '', sample.value]),
      [['demo_seconds_bucket', '0.1', 1], ['demo_seconds_bucket', '1', 3], ['demo_seconds_bucket', '+Inf', 4], ['demo_seconds_sum', '', 6.05], ['demo_seconds_count', '', 4]],
    );
    assert.equal(sampleValue(families, 'demo_depth', 'demo_depth', { status: 'ok' }), Number.POSITIVE_INFINITY);
    assert.equal(families.get('demo_requests_total')?.type, 'counter');
  });

  it('should be refused by the reader when it breaks the format, so the reader can fail', () => {
    const bad = [
      'x 1',
      '# TYPE x counter\nx{a="b} 1\n',
      '# TYPE x counter\nx{a="\\t"} 1\n',
      '# TYPE x counter\nx 1 1700000000\n',
      '# TYPE x counter\nx -1\n',
      '# TYPE x counter\nx 1\n# TYPE y gauge\ny 1\nx{a="b"} 2\n',
      '# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_sum 1\nh_count 1\n',
      '# TYPE h histogram\nh_bucket{le="1"} 1\nh_sum 1\nh_count 1\n',
      '# TYPE x counter\nx 1\nx 2\n',
    ];
    for (const text of bad) assert.throws(() => parseExposition(text), Error, JSON.stringify(text));
  });
});

describe('series', () => {
  it('should add through a kept series to the sample its labels name, with the same labels in any order of use', () => {
    const counter = new Counter('demo_total', 'Demo.');
    const kept = counter.series({ route: 'item', status: '200' });
    kept.add();
    counter.add({ route: 'item', status: '200' }, 2);
    kept.add(4);
    const histogram = new Histogram('demo_seconds', 'Durations.', [0.1, 1]);
    const latency = histogram.seriesOf({ route: 'item' });
    latency.observe(0.5);
    histogram.observe({ route: 'item' }, 5);
    const families = parseExposition(exposition([counter, histogram]));
    assert.equal(sampleValue(families, 'demo_total', 'demo_total', { route: 'item', status: '200' }), 7);
    assert.equal(sampleValue(families, 'demo_seconds', 'demo_seconds_count', { route: 'item' }), 2);
    assert.equal(sampleValue(families, 'demo_seconds', 'demo_seconds_bucket', { route: 'item', le: '1' }), 1);
  });
});
