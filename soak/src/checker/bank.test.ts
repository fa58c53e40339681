// One crafted history per bank anomaly class: each must be reported; a clean one must not.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkEvents, type CheckResult } from './check.js';
import { CraftedHistory, type CraftedRow } from './crafted.js';
import { ANOMALY_CLASSES, type AnomalyClass } from './findings.js';

// Account -1 lives on n1, account 2 on n2: every transfer between them crosses nodes.
const A = -1;
const B = 2;
const account = (id: number, balance: number): CraftedRow => ({ values: { id, balance } });
const leg = (account: number, transfer: number, amount: number): CraftedRow => ({
  values: { account_id: account, transfer_id: transfer, amount },
});
const transfer = (id: number, amount = 10) => ({ id, from: A, to: B, amount });

function only(r: CheckResult, ...expected: AnomalyClass[]): void {
  const found = ANOMALY_CLASSES.filter((c) => r.anomalies[c] > 0);
  assert.deepEqual(found, expected, JSON.stringify(r.examples, null, 1));
}

function run(
  status: 'ok' | 'fail' | 'info',
  balances: [number, number],
  legs: CraftedRow[],
  read?: [number, number][],
): CheckResult {
  const h = new CraftedHistory()
    .bankInit([
      [A, 100],
      [B, 100],
    ])
    .op(0, 'transfer', 0, 10, status, transfer(1));
  if (read) h.op(1, 'balances', 20, 30, 'ok', { balances: null }, { balances: read });
  h.probe({ accounts: [account(A, balances[0]), account(B, balances[1])], legs });
  return checkEvents(h.events);
}

const twoLegs = [leg(A, 1, -10), leg(B, 1, 10)];

test('a clean bank history has no anomalies', () => {
  only(
    run('ok', [90, 110], twoLegs, [
      [A, 90],
      [B, 110],
    ]),
  );
  only(run('fail', [100, 100], []));
  only(run('info', [100, 100], []));
  only(run('info', [90, 110], twoLegs));
});

test('balances that do not sum to the total break it', () => {
  const r = run('ok', [90, 120], [leg(A, 1, -10), leg(B, 1, 20)]);
  assert.ok(r.anomalies['bank-total'] >= 1);
});

test('a missing account breaks the total', () => {
  const h = new CraftedHistory().bankInit([
    [A, 100],
    [B, 100],
  ]);
  h.probe({ accounts: [account(A, 100)], legs: [] });
  only(checkEvents(h.events), 'bank-total');
});

test('a negative balance in a read is reported', () => {
  const r = run('ok', [90, 110], twoLegs, [
    [A, -5],
    [B, 205],
  ]);
  only(r, 'bank-negative');
});

test('an acknowledged transfer without its two legs is reported', () => {
  only(run('ok', [100, 100], []), 'bank-legs');
});

test('a failed transfer with legs is reported', () => {
  only(run('fail', [90, 110], twoLegs), 'bank-legs');
});

test('a transfer with one leg is reported', () => {
  const r = run('info', [90, 100], [leg(A, 1, -10)]);
  assert.ok(r.anomalies['bank-legs'] >= 1);
  assert.ok(r.anomalies['bank-total'] >= 1);
});

test('legs that do not move the amount between the two accounts are reported', () => {
  only(run('ok', [90, 110], [leg(A, 1, -10), leg(A, 1, 10)]), 'bank-legs', 'bank-balance-ledger');
});

test('legs of a transfer nobody made are invented', () => {
  only(run('fail', [95, 105], [leg(A, 7, -5), leg(B, 7, 5)]), 'bank-invented');
});

test("a balance that disagrees with its account's legs is reported", () => {
  only(run('ok', [80, 120], twoLegs), 'bank-balance-ledger');
});

test('a read that misses an account has the wrong shape', () => {
  only(run('ok', [90, 110], twoLegs, [[A, 90]]), 'bank-read-shape');
});

test('a read whose total is off is fractured, not an anomaly', () => {
  const r = run('ok', [90, 110], twoLegs, [
    [A, 90],
    [B, 100],
  ]);
  only(r);
  assert.equal(r.fractured.bank, 1);
});
