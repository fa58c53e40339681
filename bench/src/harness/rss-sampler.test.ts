import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rssDrift, sampleRss, type RssSample } from './rss-sampler.js';

const MB = 1024 * 1024;
const at = (s: number, mb: number): RssSample => ({ atMs: s * 1000, bytes: mb * MB });

test('drift compares the medians of the first and the last window', () => {
  // 0..100 s every 5 s: 100 MB for the first 20 s with one spike, 102 MB at the end with one dip.
  const series = Array.from({ length: 21 }, (_, i) => at(i * 5, i <= 4 ? 100 : 102));
  series[1] = at(5, 150);
  series[19] = at(95, 90);
  const d = rssDrift(series, 20_000)!;
  assert.equal(d.startBytes, 100 * MB);
  assert.equal(d.endBytes, 102 * MB);
  assert.equal(d.growthPct, 2);
});

test('drift of one sample is none; of no samples, undefined', () => {
  assert.deepEqual(rssDrift([at(0, 50)], 1_000), {
    startBytes: 50 * MB,
    endBytes: 50 * MB,
    growthPct: 0,
  });
  assert.equal(rssDrift([], 1_000), undefined);
});

test('the sampler records a series of this process from idle to end', async () => {
  const sampler = sampleRss(process.pid, 10);
  await new Promise((resolve) => setTimeout(resolve, 60));
  const r = sampler.stop();
  assert.ok(r.samples >= 2 && r.series.length === r.samples);
  assert.equal(r.series[0]!.bytes, r.idleBytes);
  assert.equal(r.series.at(-1)!.bytes, r.endBytes);
  assert.ok(r.peakBytes >= r.idleBytes && r.idleBytes > 0);
  assert.ok(r.series.every((s, i) => i === 0 || s.atMs >= r.series[i - 1]!.atMs));
});
