import { test } from 'node:test';
import assert from 'node:assert/strict';
import { listMicros, counterMicros, transferOf } from '../checker/values.js';
import { OP_KINDS, parsePlan } from '../plan/plan.js';
import { Rng } from '../rng.js';
import { ListKeys, OpGenerator } from './generate.js';

const plan = parsePlan(
  { workload: { lists: { activeKeys: 4, maxAppendsPerKey: 10 } } },
  't',
).workload;

test('every operation kind produces a value the checker reads and SQL to run', () => {
  const g = new OpGenerator(plan, [1, 2, 3, 4]);
  const rng = new Rng(1);
  for (const kind of OP_KINDS) {
    for (let i = 0; i < 20; i++) {
      const op = g.next(kind, rng);
      assert.ok(op.statements.length > 0, kind);
      if (op.f === 'list') assert.ok(listMicros(op.value), kind);
      if (op.f === 'counter') assert.ok(counterMicros(op.value), kind);
      if (op.f === 'transfer') assert.ok(transferOf(op.value), kind);
      if (op.txn === undefined)
        assert.equal(op.statements.length, 1, `${kind}: autocommit is one statement`);
    }
  }
});

test('appended values are unique across operations', () => {
  const g = new OpGenerator(plan, [1, 2]);
  const rng = new Rng(2);
  const seen = new Set<number>();
  for (let i = 0; i < 500; i++) {
    for (const m of listMicros(g.next(i % 2 ? 'list-append' : 'list-txn', rng).value)!) {
      if (m[0] !== 'append') continue;
      assert.ok(!seen.has(m[2]));
      seen.add(m[2]);
    }
  }
});

test('a multi-key list transaction takes its keys in ascending order', () => {
  const g = new OpGenerator(plan, [1, 2]);
  const rng = new Rng(3);
  for (let i = 0; i < 100; i++) {
    const keys = listMicros(g.next('list-txn', rng).value)!.map((m) => m[1]);
    const distinct = keys.filter((k, j) => keys.indexOf(k) === j);
    assert.deepEqual(
      distinct,
      [...distinct].sort((a, b) => a - b),
    );
  }
});

test('list keys rotate after maxAppendsPerKey appends', () => {
  const keys = new ListKeys(2, 3);
  const rng = new Rng(4);
  const counts = new Map<number, number>();
  for (let i = 0; i < 60; i++) {
    const k = keys.forAppend(rng);
    counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  assert.ok([...counts.values()].every((n) => n <= 3));
  assert.equal(keys.all.size, 2 + 60 / 3);
});

test('transfers lock their two accounts in ascending order', () => {
  const g = new OpGenerator(plan, [5, 9, 2]);
  const rng = new Rng(5);
  for (let i = 0; i < 50; i++) {
    const op = g.next('transfer', rng);
    const ids = op.statements.slice(0, 2).map((s) => s.params[0] as number);
    assert.ok(ids[0]! < ids[1]!);
  }
});
