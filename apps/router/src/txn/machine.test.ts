// The transaction state machine, table-tested without sockets: each row is a sequence of events
// (what the session tells the machine) and what the machine must say after it.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { TxnMachine, type Entry, type PartStatus, type Settled, type TxnPhase } from './machine.js';

type Event =
  | { begin: string }
  | { defer: string }
  | { enter: string; failed?: boolean; expect: Entry['kind']; sql?: string; poison?: boolean }
  | { settled: string; status: PartStatus; expect: Settled }
  | { lost: string }
  | { wrote: string; epoch?: bigint }
  | { replayed: string }
  | { uncertain: true }
  | { failed: true; expect: string | undefined }
  | { savepoint: string; settings: string }
  | { release: string; expect: boolean }
  | { rollbackTo: string; expect: string | undefined }
  | { end: true; expect: string | undefined }
  | { chain: string; settings: string }
  | { chainedOnNode: string };

interface Row {
  name: string;
  events: Event[];
  phase: TxnPhase;
  /** Status with every part's backend reporting `live` (default 'T'). */
  status: 'I' | 'T' | 'E';
  live?: Record<string, PartStatus>;
  first?: string | undefined;
  written?: Record<string, boolean>;
  replay?: string[];
}

function apply(m: TxnMachine<string>, e: Event, current: string): void {
  if ('begin' in e) return void m.begin(e.begin, current);
  if ('defer' in e) return m.defer(e.defer);
  if ('enter' in e) {
    const got = m.enter(e.enter, e.failed ?? false);
    assert.equal(got.kind, e.expect, `enter ${e.enter}`);
    if (got.kind === 'join') {
      if (e.sql !== undefined) assert.equal(got.sql, e.sql);
      assert.equal(got.poison, e.poison ?? false, `poison on entering ${e.enter}`);
    }
    return;
  }
  if ('settled' in e)
    return void assert.equal(
      m.settled(e.settled, e.status, () => current),
      e.expect,
    );
  if ('lost' in e) return m.lost(e.lost);
  if ('wrote' in e) return m.wrote(e.wrote, true, e.epoch);
  if ('replayed' in e) return m.replayed(e.replayed);
  if ('uncertain' in e) return m.markUncertain();
  if ('failed' in e) return void assert.equal(m.failed(), e.expect);
  if ('savepoint' in e) return m.savepoint(e.savepoint, e.settings);
  if ('release' in e) return void assert.equal(m.release(e.release), e.expect);
  if ('rollbackTo' in e) return void assert.equal(m.rollbackTo(e.rollbackTo)?.settings, e.expect);
  if ('end' in e) return void assert.equal(m.end(), e.expect);
  if ('chain' in e) return m.chain(e.chain, e.settings);
  if ('chainedOnNode' in e) return m.chainedOnNode(e.chainedOnNode);
}

const ROWS: Row[] = [
  { name: 'nothing happened', events: [], phase: 'idle', status: 'I' },
  {
    name: 'BEGIN is deferred',
    events: [{ begin: 'BEGIN' }],
    phase: 'deferred',
    status: 'T',
  },
  {
    name: 'a second BEGIN changes nothing',
    events: [{ begin: 'BEGIN ISOLATION LEVEL SERIALIZABLE' }, { begin: 'BEGIN' }],
    phase: 'deferred',
    status: 'T',
  },
  {
    name: 'the first statement takes BEGIN and what followed it to its node',
    events: [
      { begin: 'BEGIN' },
      { defer: "SET LOCAL work_mem = '1MB'" },
      { enter: 'n1', expect: 'join', sql: "BEGIN; SET LOCAL work_mem = '1MB'" },
      { enter: 'n1', expect: 'member' },
    ],
    phase: 'one',
    status: 'T',
    first: 'n1',
    replay: ['BEGIN', "SET LOCAL work_mem = '1MB'"],
  },
  {
    name: 'a statement outside a transaction needs nothing',
    events: [{ enter: 'n1', expect: 'none' }],
    phase: 'idle',
    status: 'I',
  },
  {
    name: 'a failed deferred transaction fails the node it reaches',
    events: [
      { begin: 'BEGIN' },
      { failed: true, expect: undefined },
      { enter: 'n1', expect: 'join', poison: true },
    ],
    phase: 'one',
    status: 'T',
  },
  {
    name: 'failed while deferred',
    events: [{ begin: 'BEGIN' }, { failed: true, expect: undefined }],
    phase: 'deferred',
    status: 'E',
  },
  {
    name: 'ROLLBACK TO recovers a failed deferred transaction',
    events: [
      { begin: 'BEGIN' },
      { savepoint: 'a', settings: 's1' },
      { failed: true, expect: undefined },
      { rollbackTo: 'a', expect: 's1' },
    ],
    phase: 'deferred',
    status: 'T',
  },
  {
    name: 'a refused statement in an open transaction names the node to fail',
    events: [{ begin: 'BEGIN' }, { enter: 'n2', expect: 'join' }, { failed: true, expect: 'n2' }],
    phase: 'one',
    status: 'E',
    live: { n2: 'E' },
  },
  {
    name: "the one node's COMMIT ends it",
    events: [
      { begin: 'BEGIN' },
      { enter: 'n1', expect: 'join' },
      { settled: 'n1', status: 'T', expect: 'none' },
      { settled: 'n1', status: 'I', expect: 'ended' },
    ],
    phase: 'idle',
    status: 'I',
  },
  {
    name: 'a second node joins with the replay, and the transaction crosses nodes',
    events: [
      { begin: 'BEGIN READ WRITE' },
      { enter: 'n1', expect: 'join' },
      { replayed: 'SAVEPOINT a' },
      { wrote: 'n1' },
      { enter: 'n2', expect: 'join', sql: 'BEGIN READ WRITE; SAVEPOINT a' },
    ],
    phase: 'cross',
    status: 'T',
    first: 'n1',
    written: { n1: true, n2: false },
  },
  {
    name: 'a node joining a failed transaction fails too',
    events: [
      { begin: 'BEGIN' },
      { enter: 'n1', expect: 'join' },
      { enter: 'n2', failed: true, expect: 'join', poison: true },
    ],
    phase: 'cross',
    status: 'E',
    live: { n1: 'E', n2: 'T' },
  },
  {
    name: 'no node joins once the replay is uncertain',
    events: [
      { begin: 'BEGIN' },
      { enter: 'n1', expect: 'join' },
      { uncertain: true },
      { enter: 'n2', expect: 'uncertain' },
    ],
    phase: 'one',
    status: 'T',
  },
  {
    name: 'a part that ends on its own breaks a transaction across nodes',
    events: [
      { begin: 'BEGIN' },
      { enter: 'n1', expect: 'join' },
      { enter: 'n2', expect: 'join' },
      { settled: 'n2', status: 'I', expect: 'broke' },
    ],
    phase: 'cross',
    status: 'E',
    first: 'n1',
  },
  {
    name: 'a lost part breaks even a one-node transaction',
    events: [{ begin: 'BEGIN' }, { enter: 'n1', expect: 'join' }, { lost: 'n1' }],
    phase: 'cross',
    status: 'E',
  },
  {
    name: 'a lost backend reported by settle',
    events: [
      { begin: 'BEGIN' },
      { enter: 'n1', expect: 'join' },
      { settled: 'n1', status: 'lost', expect: 'broke' },
    ],
    phase: 'cross',
    status: 'E',
  },
  {
    name: "the client's own BEGIN in a multi-statement text",
    events: [{ settled: 'n1', status: 'T', expect: 'began' }],
    phase: 'one',
    status: 'T',
    first: 'n1',
    written: { n1: true },
    replay: ['BEGIN'],
  },
  {
    name: "the client's own text joins another node",
    events: [
      { begin: 'BEGIN' },
      { enter: 'n1', expect: 'join' },
      { settled: 'n2', status: 'T', expect: 'joined' },
    ],
    phase: 'cross',
    status: 'T',
    written: { n1: false, n2: true },
  },
  {
    name: 'the end gives the settings the transaction began with',
    events: [{ begin: 'BEGIN' }, { enter: 'n1', expect: 'join' }, { end: true, expect: 'start' }],
    phase: 'idle',
    status: 'I',
  },
  {
    name: 'AND CHAIN answered by the router begins a deferred transaction alike',
    events: [
      { begin: 'BEGIN ISOLATION LEVEL REPEATABLE READ' },
      { enter: 'n1', expect: 'join' },
      { enter: 'n2', expect: 'join' },
      { end: true, expect: 'start' },
      { chain: 'BEGIN ISOLATION LEVEL REPEATABLE READ', settings: 'later' },
      { enter: 'n2', expect: 'join', sql: 'BEGIN ISOLATION LEVEL REPEATABLE READ' },
    ],
    phase: 'one',
    status: 'T',
    first: 'n2',
  },
  {
    name: 'AND CHAIN on the one node keeps its part, unwritten',
    events: [
      { begin: 'BEGIN' },
      { enter: 'n1', expect: 'join' },
      { wrote: 'n1', epoch: 3n },
      { replayed: 'SAVEPOINT a' },
      { chainedOnNode: 'now' },
    ],
    phase: 'one',
    status: 'T',
    written: { n1: false },
    replay: ['BEGIN'],
  },
  {
    name: 'RELEASE and ROLLBACK TO of a savepoint that does not exist',
    events: [
      { begin: 'BEGIN' },
      { savepoint: 'a', settings: 's1' },
      { savepoint: 'b', settings: 's2' },
      { release: 'c', expect: false },
      { rollbackTo: 'c', expect: undefined },
      { rollbackTo: 'a', expect: 's1' },
      { release: 'b', expect: false },
      { release: 'a', expect: true },
      { rollbackTo: 'a', expect: undefined },
    ],
    phase: 'deferred',
    status: 'T',
  },
  {
    name: 'a savepoint name used twice: the later one first',
    events: [
      { begin: 'BEGIN' },
      { savepoint: 'a', settings: 's1' },
      { savepoint: 'a', settings: 's2' },
      { rollbackTo: 'a', expect: 's2' },
      { release: 'a', expect: true },
      { rollbackTo: 'a', expect: 's1' },
    ],
    phase: 'deferred',
    status: 'T',
  },
];

describe('TxnMachine', () => {
  for (const row of ROWS) {
    test(row.name, () => {
      const m = new TxnMachine<string>();
      for (const e of row.events) apply(m, e, 'start');
      assert.equal(m.phase, row.phase, 'phase');
      assert.equal(
        m.status((node) => row.live?.[node] ?? 'T'),
        row.status,
        'status',
      );
      if ('first' in row) assert.equal(m.first, row.first, 'first');
      if (row.written !== undefined)
        assert.deepEqual(
          Object.fromEntries([...m.parts()].map(([n, p]) => [n, p.written])),
          row.written,
        );
      if (row.replay !== undefined) assert.deepEqual(m.replayLog, row.replay);
    });
  }

  test('the first write of a part keeps its epoch', () => {
    const m = new TxnMachine<string>();
    m.begin('BEGIN', 's');
    m.enter('n1', false);
    m.wrote('n1', false, 1n);
    m.wrote('n1', true, 4n);
    m.wrote('n1', true, 5n);
    assert.equal(m.parts().next().value?.[1].firstWriteEpoch, 4n);
  });

  test('an open transaction whose backends are all idle reads as idle until settled', () => {
    const m = new TxnMachine<string>();
    m.begin('BEGIN', 's');
    m.enter('n1', false);
    assert.equal(
      m.status(() => 'I'),
      'I',
    );
    assert.equal(
      m.status(() => undefined),
      'I',
    );
  });
});
