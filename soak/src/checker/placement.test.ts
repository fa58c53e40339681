// Placement, leftovers, the final state itself, and the history format.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkEvents, checkHistoryText, type CheckResult } from './check.js';
import { CraftedHistory, listRow } from './crafted.js';
import { ANOMALY_CLASSES, type AnomalyClass } from './findings.js';

function only(r: CheckResult, ...expected: AnomalyClass[]): void {
  const found = ANOMALY_CLASSES.filter((c) => r.anomalies[c] > 0);
  assert.deepEqual(found, expected, JSON.stringify(r.examples, null, 1));
}

const app = (k: number, v: number) => ({ ops: [['append', k, v]] });

test('a row on a node that does not own its hash is misplaced', () => {
  const h = new CraftedHistory()
    .op(0, 'list', 0, 10, 'ok', app(-3, 1))
    // the owner (n1) has it, and a stray copy sits on n2
    .probe({ lists: [listRow(-3, [1]), listRow(-3, [1], { node: 'n2' })] });
  only(checkEvents(h.events), 'placement-misplaced');
});

test("a misplaced row is not its key's final value", () => {
  const h = new CraftedHistory()
    .op(0, 'list', 0, 10, 'ok', app(-3, 1))
    .probe({ lists: [listRow(-3, [1], { node: 'n2' })] });
  only(checkEvents(h.events), 'list-lost', 'placement-misplaced');
});

test('a Tessera slot left on a node is a leftover', () => {
  const h = new CraftedHistory().probe({}, { slots: { n1: ['tessera_move_3', 'someone_else'] } });
  only(checkEvents(h.events), 'placement-leftover');
});

test("a streaming replica's physical slot is not a leftover, whatever its name", () => {
  const h = new CraftedHistory().probe({}, { physicalSlots: { n1: ['tessera_n1_replica', 'x'] } });
  only(checkEvents(h.events));
});

test("rows read from an instance other than the catalog's primary cannot pass", () => {
  const stale = new CraftedHistory().probe({}, { instances: { n1: '10.0.0.9:5432' } });
  only(checkEvents(stale.events), 'final-state-missing');
  // The catalog names the promoted instance: rows read there are the node's.
  const promoted = new CraftedHistory().probe({}, { instances: { n1: '10.0.0.2:5432' } });
  only(checkEvents(promoted.events));
});

test('a prepared transaction left on a node is reported', () => {
  const h = new CraftedHistory().probe({}, { prepared: { n2: ['tessera:c:9:n2'] } });
  only(checkEvents(h.events), 'prepared-left');
});

test('a history without a final-state probe cannot pass', () => {
  const h = new CraftedHistory().op(0, 'list', 0, 10, 'ok', app(1, 1));
  only(checkEvents(h.events), 'final-state-missing');
});

test('a probe that did not reach every node cannot pass', () => {
  const h = new CraftedHistory().probe({});
  const events = h.events.filter(
    (e) => !(e.f === 'node-state' && (e.value as { node: string }).node === 'home'),
  );
  only(checkEvents(events), 'final-state-missing');
});

test('the last complete probe is the one checked', () => {
  const h = new CraftedHistory()
    .op(0, 'list', 0, 10, 'ok', app(1, 1))
    .probe({ lists: [listRow(1, [1])] }, { probe: 1 })
    .probe({ lists: [listRow(1, [])] }, { probe: 2 });
  only(checkEvents(h.events), 'list-lost');
});

test('a process that invokes after an info retired it breaks the format', () => {
  const h = new CraftedHistory()
    .op(0, 'list', 0, 10, 'info', app(1, 1))
    .op(0, 'list', 20, 30, 'ok', app(1, 2))
    .probe({ lists: [listRow(1, [2])] });
  only(checkEvents(h.events), 'history-malformed');
});

test('two invokes without a completion, or a completion without an invoke, break the format', () => {
  const h = new CraftedHistory()
    .at(0)
    .invoke(0, 'list', app(1, 1))
    .invoke(0, 'list', app(1, 2))
    .at(5)
    .ok(3, 'list', app(1, 3))
    .probe({});
  const r = checkEvents(h.events);
  assert.ok(r.anomalies['history-malformed'] >= 2);
});

test('an invoke never completed counts as info', () => {
  const h = new CraftedHistory()
    .at(0)
    .invoke(0, 'list', app(1, 1))
    .probe({ lists: [listRow(1, [1])] });
  const r = checkEvents(h.events);
  only(r);
  assert.equal(r.operations.info, 1);
});

test('text that is not JSON lines is reported, not thrown', () => {
  const h = new CraftedHistory().probe({});
  const text = `${h.events.map((e) => JSON.stringify(e)).join('\n')}\nnot json\n{"index":"x"}\n`;
  const r = checkHistoryText(text);
  assert.equal(r.anomalies['history-malformed'], 2);
});
