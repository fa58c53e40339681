// One crafted history per counter anomaly class: each must be reported; a clean one must not.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkEvents, type CheckResult } from './check.js';
import { CraftedHistory, type CraftedRow } from './crafted.js';
import { ANOMALY_CLASSES, type AnomalyClass } from './findings.js';

const add = (k: number, d: number, id: number) => ({ ops: [['add', k, d, id]] });
const rd = (k: number, n: number | null) => ({ ops: [['r', k, n]] });
const counter = (k: number, n: number): CraftedRow => ({ values: { k, n } });
const ledger = (id: number, k: number, d: number): CraftedRow => ({ values: { op_id: id, k, d } });

function only(r: CheckResult, ...expected: AnomalyClass[]): void {
  const found = ANOMALY_CLASSES.filter((c) => r.anomalies[c] > 0);
  assert.deepEqual(found, expected, JSON.stringify(r.examples, null, 1));
}

/** An ok add of 5 (id 1), an unknown add of 3 (id 2), then a read. */
function base(read: number, ledgerRows: CraftedRow[], n: number): CraftedHistory {
  return new CraftedHistory()
    .op(0, 'counter', 0, 10, 'ok', add(1, 5, 1))
    .op(1, 'counter', 20, 25, 'info', add(1, 3, 2))
    .op(2, 'counter', 30, 40, 'ok', rd(1, null), rd(1, read))
    .probe({ counters: [counter(1, n)], ledger: ledgerRows });
}

test('a clean counter history has no anomalies, and the ledger settles the unknown add', () => {
  const r = checkEvents(base(8, [ledger(1, 1, 5), ledger(2, 1, 3)], 8).events);
  only(r);
  assert.equal(r.counters.settledCommitted, 1);
  assert.equal(r.counters.settledAbsent, 0);
});

test('an unknown add that did not commit is settled absent', () => {
  const r = checkEvents(base(5, [ledger(1, 1, 5)], 5).events);
  only(r);
  assert.equal(r.counters.settledAbsent, 1);
});

test('a read below the acknowledged adds breaks the bounds', () => {
  only(checkEvents(base(4, [ledger(1, 1, 5), ledger(2, 1, 3)], 8).events), 'counter-read-bounds');
});

test('a read counting an unknown add that the ledger says never committed breaks the settled bounds', () => {
  // Jepsen's bounds alone would accept 8 (5 ok + 3 unknown); the ledger says the 3 never committed.
  only(checkEvents(base(8, [ledger(1, 1, 5)], 5).events), 'counter-read-bounds');
});

test('an acknowledged add without a ledger row is lost', () => {
  only(checkEvents(base(5, [ledger(2, 1, 3)], 3).events), 'counter-lost');
});

test('a ledger row of a failed add is aborted', () => {
  const h = new CraftedHistory()
    .op(0, 'counter', 0, 10, 'fail', add(1, 5, 1))
    .probe({ counters: [counter(1, 5)], ledger: [ledger(1, 1, 5)] });
  only(checkEvents(h.events), 'counter-aborted');
});

test('a ledger row nobody wrote is invented', () => {
  const h = new CraftedHistory()
    .op(0, 'counter', 0, 10, 'ok', add(1, 5, 1))
    .probe({ counters: [counter(1, 12)], ledger: [ledger(1, 1, 5), ledger(99, 1, 7)] });
  only(checkEvents(h.events), 'counter-invented');
});

test('a ledger id twice is duplicated', () => {
  const h = new CraftedHistory()
    .op(0, 'counter', 0, 10, 'ok', add(1, 5, 1))
    .probe({ counters: [counter(1, 10)], ledger: [ledger(1, 1, 5), ledger(1, 1, 5)] });
  only(checkEvents(h.events), 'counter-duplicated');
});

test('a counter that disagrees with its ledger is a mismatch', () => {
  const h = new CraftedHistory()
    .op(0, 'counter', 0, 10, 'ok', add(1, 5, 1))
    .probe({ counters: [counter(1, 7)], ledger: [ledger(1, 1, 5)] });
  only(checkEvents(h.events), 'counter-ledger-mismatch');
});

test('a multi-key add committed on one key only is partial', () => {
  const h = new CraftedHistory()
    .op(0, 'counter', 0, 10, 'info', {
      ops: [
        ['add', 1, 5, 1],
        ['add', -2, 5, 2],
      ],
    })
    .probe({ counters: [counter(1, 5), counter(-2, 0)], ledger: [ledger(1, 1, 5)] });
  only(checkEvents(h.events), 'counter-partial-txn');
});
