// One crafted history per list anomaly class: each must be reported; a clean one must not.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkEvents, type CheckResult } from './check.js';
import { CraftedHistory, listRow } from './crafted.js';
import { ANOMALY_CLASSES, type AnomalyClass } from './findings.js';

const app = (k: number, v: number) => ({ ops: [['append', k, v]] });
const rd = (k: number, vals: number[] | null) => ({ ops: [['r', k, vals]] });

function only(r: CheckResult, ...expected: AnomalyClass[]): void {
  const found = ANOMALY_CLASSES.filter((c) => r.anomalies[c] > 0);
  assert.deepEqual(found, expected, JSON.stringify(r.examples, null, 1));
}

test('a clean list history has no anomalies', () => {
  const h = new CraftedHistory()
    .op(0, 'list', 0, 10, 'ok', app(1, 1))
    .op(1, 'list', 20, 30, 'ok', app(1, 2))
    .op(2, 'list', 40, 50, 'ok', rd(1, null), rd(1, [1, 2]))
    .op(3, 'list', 60, 70, 'ok', {
      ops: [
        ['append', 1, 3],
        ['append', 2, 4],
      ],
    })
    .op(
      4,
      'list',
      80,
      90,
      'ok',
      {
        ops: [
          ['r', 1, null],
          ['r', 2, null],
        ],
      },
      {
        ops: [
          ['r', 1, [1, 2, 3]],
          ['r', 2, [4]],
        ],
      },
    )
    .op(5, 'list', 100, 105, 'info', app(2, 5))
    .op(6, 'list', 105, 110, 'fail', app(2, 6))
    .op(7, 'list', 110, 120, 'info', app(2, 7))
    .op(8, 'list', 130, 140, 'ok', rd(2, null), rd(2, [4, 7]))
    .probe({ lists: [listRow(1, [1, 2, 3]), listRow(2, [4, 7])] });
  const r = checkEvents(h.events);
  only(r);
  assert.equal(r.fractured.lists, 0);
  assert.equal(r.lists.appends, 7);
  assert.equal(r.operations.info, 2);
});

test('a value twice in a read or in the final list is duplicated', () => {
  const h = new CraftedHistory()
    .op(0, 'list', 0, 10, 'ok', app(1, 1))
    .op(1, 'list', 20, 30, 'ok', rd(1, null), rd(1, [1, 1]))
    .probe({ lists: [listRow(1, [1, 1])] });
  only(checkEvents(h.events), 'list-duplicated');
});

test('a duplicated value only in the final list is still reported', () => {
  const h = new CraftedHistory()
    .op(0, 'list', 0, 10, 'ok', app(1, 1))
    .probe({ lists: [listRow(1, [1, 1])] });
  only(checkEvents(h.events), 'list-duplicated');
});

test('a value nobody appended is invented', () => {
  const h = new CraftedHistory()
    .op(0, 'list', 0, 10, 'ok', app(1, 1))
    .probe({ lists: [listRow(1, [1]), listRow(9, [999])] });
  only(checkEvents(h.events), 'list-invented');
});

test('a value appended to another key is invented on this one', () => {
  const h = new CraftedHistory()
    .op(0, 'list', 0, 10, 'ok', app(1, 1))
    .op(1, 'list', 0, 10, 'ok', app(2, 2))
    .op(2, 'list', 20, 30, 'ok', rd(1, null), rd(1, [1, 2]))
    .probe({ lists: [listRow(1, [1]), listRow(2, [2])] });
  const r = checkEvents(h.events);
  assert.ok(r.anomalies['list-invented'] >= 1);
});

test('a value whose append failed is an aborted read', () => {
  const h = new CraftedHistory()
    .op(0, 'list', 0, 10, 'fail', app(1, 1))
    .op(1, 'list', 20, 30, 'ok', rd(1, null), rd(1, [1]))
    .probe({ lists: [listRow(1, [1])] });
  only(checkEvents(h.events), 'list-aborted-read');
});

test('an acknowledged append missing at the end is lost', () => {
  const h = new CraftedHistory()
    .op(0, 'list', 0, 10, 'ok', app(1, 1))
    .op(1, 'list', 20, 30, 'ok', app(1, 2))
    .probe({ lists: [listRow(1, [1])] });
  only(checkEvents(h.events), 'list-lost');
});

test('an unknown append that was read and then is gone is lost after seen', () => {
  const h = new CraftedHistory()
    .op(0, 'list', 0, 10, 'info', app(1, 1))
    .op(1, 'list', 20, 30, 'ok', rd(1, null), rd(1, [1]))
    .probe({ lists: [listRow(1, [])] });
  only(checkEvents(h.events), 'list-lost-after-seen');
});

test('an unknown append that never shows up is not an anomaly', () => {
  const h = new CraftedHistory().op(0, 'list', 0, 10, 'info', app(1, 1)).probe({ lists: [] });
  only(checkEvents(h.events));
});

test('an append acknowledged before another was invoked must come first', () => {
  const h = new CraftedHistory()
    .op(0, 'list', 0, 10, 'ok', app(1, 1))
    .op(1, 'list', 20, 30, 'ok', app(1, 2))
    .probe({ lists: [listRow(1, [2, 1])] });
  only(checkEvents(h.events), 'list-out-of-order');
});

test('concurrent appends may land in either order', () => {
  const h = new CraftedHistory()
    .at(0)
    .invoke(0, 'list', app(1, 1))
    .invoke(1, 'list', app(1, 2))
    .at(10)
    .ok(0, 'list', app(1, 1))
    .ok(1, 'list', app(1, 2))
    .probe({ lists: [listRow(1, [2, 1])] });
  only(checkEvents(h.events));
});

test('a read that is not a prefix of the final list is reported', () => {
  const h = new CraftedHistory()
    .op(0, 'list', 0, 10, 'ok', app(1, 1))
    .op(1, 'list', 0, 10, 'ok', app(1, 2))
    .op(2, 'list', 0, 10, 'ok', app(1, 3))
    .op(3, 'list', 20, 30, 'ok', rd(1, null), rd(1, [1, 3]))
    .probe({ lists: [listRow(1, [1, 2, 3])] });
  const r = checkEvents(h.events);
  assert.ok(r.anomalies['list-not-prefix'] >= 1);
});

test('a read that misses an append acknowledged before it began is stale', () => {
  const h = new CraftedHistory()
    .op(0, 'list', 0, 10, 'ok', app(1, 1))
    .op(1, 'list', 20, 30, 'ok', rd(1, null), rd(1, []))
    .probe({ lists: [listRow(1, [1])] });
  only(checkEvents(h.events), 'list-stale-read');
});

test('a read concurrent with an append may miss it', () => {
  const h = new CraftedHistory()
    .at(0)
    .invoke(0, 'list', app(1, 1))
    .invoke(1, 'list', rd(1, null))
    .at(10)
    .ok(1, 'list', rd(1, []))
    .ok(0, 'list', app(1, 1))
    .probe({ lists: [listRow(1, [1])] });
  only(checkEvents(h.events));
});

test('a read older than a read that completed before it began is stale (monotonic)', () => {
  const h = new CraftedHistory()
    .op(0, 'list', 0, 10, 'info', app(1, 1))
    .op(1, 'list', 20, 30, 'ok', rd(1, null), rd(1, [1]))
    .op(2, 'list', 40, 50, 'ok', rd(1, null), rd(1, []))
    .probe({ lists: [listRow(1, [1])] });
  only(checkEvents(h.events), 'list-nonmonotonic-read');
});

test('a multi-key transaction committed on one key only is partial', () => {
  const h = new CraftedHistory()
    .op(0, 'list', 0, 10, 'info', {
      ops: [
        ['append', 1, 10],
        ['append', -2, 20],
      ],
    })
    .probe({ lists: [listRow(1, [10]), listRow(-2, [])] });
  only(checkEvents(h.events), 'list-partial-txn');
});

test('a read of several keys that sees a transaction on one key only is fractured, not an anomaly', () => {
  const h = new CraftedHistory()
    .at(0)
    .invoke(0, 'list', {
      ops: [
        ['append', 1, 10],
        ['append', -2, 20],
      ],
    })
    .at(50)
    .invoke(1, 'list', {
      ops: [
        ['r', 1, null],
        ['r', -2, null],
      ],
    })
    .at(60)
    .ok(1, 'list', {
      ops: [
        ['r', 1, [10]],
        ['r', -2, []],
      ],
    })
    .at(100)
    .ok(0, 'list', {
      ops: [
        ['append', 1, 10],
        ['append', -2, 20],
      ],
    })
    .probe({ lists: [listRow(1, [10]), listRow(-2, [20])] });
  const r = checkEvents(h.events);
  only(r);
  assert.equal(r.fractured.lists, 1);
});

test("reads of the final-state probe's router reads are held to the same rules", () => {
  const h = new CraftedHistory()
    .op(0, 'list', 0, 10, 'ok', app(1, 1))
    .op(1, 'list', 20, 30, 'ok', app(1, 2))
    // the probe's read through a router misses an acknowledged append
    .op(2, 'list', 40, 50, 'ok', rd(1, null), rd(1, [1]))
    .probe({ lists: [listRow(1, [1, 2])] });
  only(checkEvents(h.events), 'list-stale-read');
});

test("Elle's G1c example: two transactions that each saw the other's append", () => {
  // Elle README: T1 [[:append 1 1] [:r 2 [1]]], T2 [[:append 2 1] [:r 1 [1]]], with unique values.
  const t1 = {
    ops: [
      ['append', 1, 10],
      ['r', 2, null],
    ],
  };
  const t2 = {
    ops: [
      ['append', 2, 20],
      ['r', 1, null],
    ],
  };
  const h = new CraftedHistory()
    .at(0)
    .invoke(0, 'list', t1)
    .invoke(1, 'list', t2)
    .at(10)
    .ok(0, 'list', {
      ops: [
        ['append', 1, 10],
        ['r', 2, [20]],
      ],
    })
    .ok(1, 'list', {
      ops: [
        ['append', 2, 20],
        ['r', 1, [10]],
      ],
    })
    .probe({ lists: [listRow(1, [10]), listRow(2, [20])] });
  only(checkEvents(h.events), 'list-g1c');
});

test('a write-write order against a write-read order is a G1c cycle too', () => {
  // T1 appends 10 then T2 appends 11 to key 1 (ww T1 -> T2); T1 read key 2 with T2's 20 (wr T2 -> T1).
  const h = new CraftedHistory()
    .at(0)
    .invoke(0, 'list', {
      ops: [
        ['append', 1, 10],
        ['r', 2, null],
      ],
    })
    .invoke(1, 'list', {
      ops: [
        ['append', 2, 20],
        ['append', 1, 11],
      ],
    })
    .at(10)
    .ok(0, 'list', {
      ops: [
        ['append', 1, 10],
        ['r', 2, [20]],
      ],
    })
    .ok(1, 'list', {
      ops: [
        ['append', 2, 20],
        ['append', 1, 11],
      ],
    })
    .probe({ lists: [listRow(1, [10, 11]), listRow(2, [20])] });
  only(checkEvents(h.events), 'list-g1c');
});

test("a transaction's read that misses its own earlier append is internally inconsistent", () => {
  const h = new CraftedHistory()
    .op(
      0,
      'list',
      0,
      10,
      'ok',
      {
        ops: [
          ['append', 1, 10],
          ['r', 1, null],
        ],
      },
      {
        ops: [
          ['append', 1, 10],
          ['r', 1, []],
        ],
      },
    )
    .probe({ lists: [listRow(1, [10])] });
  only(checkEvents(h.events), 'list-internal');
});

test('a transaction reading its own append sees it at the end', () => {
  const h = new CraftedHistory()
    .op(0, 'list', 0, 10, 'ok', app(1, 1))
    .op(
      1,
      'list',
      20,
      30,
      'ok',
      {
        ops: [
          ['r', 1, null],
          ['append', 1, 10],
          ['r', 1, null],
        ],
      },
      {
        ops: [
          ['r', 1, [1]],
          ['append', 1, 10],
          ['r', 1, [1, 10]],
        ],
      },
    )
    .probe({ lists: [listRow(1, [1, 10])] });
  only(checkEvents(h.events));
});

test('a value duplicated at the end of the final list is not also an order cycle', () => {
  const h = new CraftedHistory()
    .op(0, 'list', 0, 10, 'ok', app(1, 1))
    .op(
      1,
      'list',
      20,
      30,
      'ok',
      {
        ops: [
          ['append', 1, 2],
          ['r', 1, null],
        ],
      },
      {
        ops: [
          ['append', 1, 2],
          ['r', 1, [1, 2]],
        ],
      },
    )
    .probe({ lists: [listRow(1, [1, 2, 1])] });
  only(checkEvents(h.events), 'list-duplicated');
});
