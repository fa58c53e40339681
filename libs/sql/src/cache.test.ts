// AnalysisCache: hits return the same frozen object, the least recently used entry is evicted.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { initSqlParser, AnalysisCache, SqlError } from './index.js';

await initSqlParser();

test('cache hits return the identical analysis', () => {
  const cache = new AnalysisCache();
  const a = cache.get('select * from t where id = $1');
  const b = cache.get('select * from t where id = $1');
  assert.equal(a, b);
  assert.equal(cache.hits, 1);
  assert.equal(cache.misses, 1);
  assert.ok(Object.isFrozen(a));
});

test('least recently used entries are evicted at the bound', () => {
  const cache = new AnalysisCache(2);
  cache.get('select 1');
  cache.get('select 2');
  cache.get('select 1');
  cache.get('select 3');
  assert.equal(cache.size, 2);
  assert.equal(cache.has('select 1'), true);
  assert.equal(cache.has('select 2'), false);
  assert.equal(cache.has('select 3'), true);
});

test('syntax errors are thrown and not cached', () => {
  const cache = new AnalysisCache();
  assert.throws(() => cache.get('selec'), SqlError);
  assert.equal(cache.size, 0);
  assert.throws(() => new AnalysisCache(0), RangeError);
});
