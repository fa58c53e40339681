// Transaction time across nodes: the placeholder in leaf SQL, binding one instant per transaction,
// and the literal the router makes from its own clock.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { initSqlParser } from '../parser.js';
import { ALL_PLAN_FEATURES, planRead } from './plan.js';
import { bindTransactionTime, formatTransactionTime } from './transaction-time.js';
import { testCatalog } from './testcatalog.testutil.js';

await initSqlParser();

test('without the option, now() across nodes is refused as before', () => {
  const p = planRead('select id from t where created < now()', testCatalog());
  assert.equal(p.kind, 'refuse');
});

test('binding puts one literal in every leaf and clears the mark', () => {
  const p = planRead(
    'select count(*) from t where created < now() and day = current_date',
    testCatalog(),
    ALL_PLAN_FEATURES,
  );
  assert.ok(p.kind === 'plan' && p.usesTransactionTime);
  const bound = bindTransactionTime(p, '2026-12-01 21:17:14.123456+00');
  assert.equal(bound.usesTransactionTime, false);
  assert.ok(!bound.leafSql.includes('__tessera_transaction_time__'));
  assert.equal(bound.leafSql.split("'2026-12-01 21:17:14.123456+00'").length, 3);
  const scatter = (n: typeof bound.root): string =>
    n.kind === 'scatter' ? n.sql : 'input' in n ? scatter(n.input) : '';
  assert.equal(scatter(bound.root), bound.leafSql);
  assert.equal(bindTransactionTime(bound, '2000-01-01 00:00:00+00'), bound);
  assert.throws(() => bindTransactionTime(p, "x'; drop table t; --"), RangeError);
});

test('formatTransactionTime gives UTC with microseconds', () => {
  assert.equal(formatTransactionTime(0n), '1970-01-01 00:00:00.000000+00');
  const micros = BigInt(Date.UTC(2026, 11, 1, 21, 17, 14)) * 1000n + 123_456n;
  assert.equal(formatTransactionTime(micros), '2026-12-01 21:17:14.123456+00');
});
