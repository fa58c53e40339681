// admit() as plain data, no sockets: session commands planned by the transaction's phase, refusals,
// and Held: writes to a frozen range wait for a later epoch (reads do not), statements for a node
// failing over wait, a transaction that wrote on the range's owner before the freeze goes on.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze, initSqlParser } from '@tessera/sql';
import type { Snapshot } from '@tessera/keyspace';
import { fixtureCatalog } from '../routing/fixture-catalog.js';
import type { ParamSource } from '../routing/key-hash.js';
import type { TxnPhase } from '../txn/machine.js';
import { PUBLIC_ONLY } from '../routing/names.js';
import { admit, type AdmitTxn } from './admit.js';
import type { Decision } from './decision.js';

// Keys 1, 3, 5 live on n1 and 2, 4, 8 on n2 (hashint8extended(k, 0) < 0 on n1).
before(() => initSqlParser());

interface Txn {
  phase?: TxnPhase;
  status?: 'I' | 'T' | 'E';
  wrote?: Record<string, bigint>;
  /** Nodes where the transaction ran statements naming tables. */
  parts?: string[];
  serializable?: boolean;
}

function view(t: Txn = {}): AdmitTxn {
  return {
    phase: t.phase ?? 'idle',
    status: t.status ?? (t.phase === undefined || t.phase === 'idle' ? 'I' : 'T'),
    transactionPooling: true,
    names: PUBLIC_ONLY,
    firstWriteEpoch: (node) => t.wrote?.[node],
    touched: (node) => t.parts?.includes(node) ?? false,
    touchedCount: t.parts?.length ?? 0,
    serializable: t.serializable ?? false,
  };
}

const text =
  (...values: string[]): ParamSource =>
  (i) => {
    const v = values[i];
    return v === undefined ? undefined : { value: Buffer.from(v), format: 0 };
  };

function decide(
  sql: string,
  snapshot: Snapshot,
  t: Txn = {},
  opts: { params?: ParamSource; describe?: boolean; extended?: boolean } = {},
): Decision {
  return admit(
    {
      analysis: analyze(sql),
      params: opts.describe === true ? undefined : (opts.params ?? (() => undefined)),
      protocol: opts.extended === true || opts.params !== undefined ? 'extended' : 'simple',
      purpose: opts.describe === true ? 'describe' : 'run',
    },
    { snapshot },
    view(t),
  );
}

const kind = (d: Decision): string =>
  d.kind === 'routed'
    ? `routed:${d.route.kind}`
    : d.kind === 'refused'
      ? `refused:${d.error.sqlstate}`
      : d.kind;

describe('admit: Held', () => {
  const frozen = fixtureCatalog({ frozen: true });

  test('a write to a frozen range is held, with the range as its reason', () => {
    for (const sql of [
      'update orders set total = 1 where tenant_id = 2',
      'delete from orders where tenant_id = 4',
      'insert into orders (tenant_id, total) values (8, 1)',
      'insert into orders (tenant_id, total) values (1, 1), (2, 1)',
      'select * from orders where tenant_id = 2 for update',
      'update orders set total = 0',
    ]) {
      const d = decide(sql, frozen);
      assert.equal(d.kind, 'held', sql);
      if (d.kind === 'held') {
        assert.deepEqual(d.reason, { kind: 'range', keyspace: 'tenants', lo: 0n }, sql);
        assert.equal(d.epoch.snapshot, frozen);
      }
    }
  });

  test('a bind parameter pins the frozen range too', () => {
    const sql = 'update orders set total = 1 where tenant_id = $1';
    assert.equal(decide(sql, frozen, {}, { params: text('2') }).kind, 'held');
    assert.equal(kind(decide(sql, frozen, {}, { params: text('1') })), 'routed:node');
  });

  test('reads of a frozen range and writes elsewhere are not held', () => {
    assert.equal(kind(decide('select * from orders where tenant_id = 2', frozen)), 'routed:node');
    assert.equal(kind(decide('select count(*) from orders', frozen)), 'routed:scatter');
    assert.equal(
      kind(decide('update orders set total = 1 where tenant_id = 1', frozen)),
      'routed:node',
    );
    assert.equal(kind(decide("insert into settings values ('a')", frozen)), 'routed:node');
  });

  test('a transaction that wrote on the range owner under an older epoch drains, not held', () => {
    const sql = 'update orders set total = 1 where tenant_id = 2';
    assert.equal(kind(decide(sql, frozen, { phase: 'one', wrote: { n2: 6n } })), 'routed:node');
    // Its first write there was under this epoch already: held like any other.
    assert.equal(decide(sql, frozen, { phase: 'one', wrote: { n2: 7n } }).kind, 'held');
    assert.equal(decide(sql, frozen, { phase: 'one', wrote: { n1: 6n } }).kind, 'held');
  });

  test('a Describe is never held', () => {
    const sql = 'update orders set total = 1 where tenant_id = $1';
    assert.equal(kind(decide(sql, frozen, {}, { describe: true })), 'routed:params');
  });

  test('without a frozen range nothing is held', () => {
    assert.equal(
      kind(decide('update orders set total = 1 where tenant_id = 2', fixtureCatalog())),
      'routed:node',
    );
  });

  test('every statement for a node failing over is held, reads too', () => {
    const failing = fixtureCatalog({ failingOver: 'n1' });
    for (const sql of ['select * from orders where tenant_id = 1', 'select count(*) from orders']) {
      const d = decide(sql, failing);
      assert.equal(d.kind, 'held', sql);
      if (d.kind === 'held') assert.deepEqual(d.reason, { kind: 'node', node: 'n1' });
    }
    assert.equal(kind(decide('select * from orders where tenant_id = 2', failing)), 'routed:node');
  });
});

describe('admit: session commands, once for both protocols', () => {
  const s = fixtureCatalog();

  test('SET goes to a node outside a transaction and on one node, with its effect', () => {
    for (const phase of ['idle', 'one'] as const) {
      const d = decide("set work_mem = '1MB'", s, { phase });
      assert.equal(kind(d), 'routed:node', phase);
      if (d.kind === 'routed') assert.equal(d.effect?.kind, 'set');
    }
    assert.equal(decide("set work_mem = '1MB'", s, { phase: 'deferred' }).kind, 'local');
    assert.equal(decide("set work_mem = '1MB'", s, { phase: 'cross' }).kind, 'local');
  });

  test('transaction control: the node answers on one node, the router otherwise', () => {
    assert.equal(decide('begin', s).kind, 'local');
    assert.equal(kind(decide('begin', s, { phase: 'one' })), 'routed:node');
    const commit = decide('commit', s, { phase: 'one', status: 'E' });
    assert.equal(
      commit.kind === 'routed' && commit.effect?.kind === 'end' && commit.effect.rolledBack,
      true,
    );
    assert.equal(decide('commit', s, { phase: 'cross' }).kind, 'local');
    const sp = decide('savepoint a', s, { phase: 'one' });
    assert.deepEqual(sp.kind === 'routed' && sp.effect, {
      kind: 'savepoint',
      name: 'a',
      sql: 'savepoint a',
    });
    assert.equal(decide('savepoint a', s, { phase: 'deferred' }).kind, 'local');
  });

  test('what Postgres refuses is refused with its SQLSTATE', () => {
    assert.equal(kind(decide('discard all', s, { phase: 'deferred' })), 'refused:25001');
    assert.equal(kind(decide('discard all', s, { phase: 'one' })), 'refused:25001');
    assert.equal(decide('discard all', s).kind, 'local');
    assert.equal(
      kind(decide("set work_mem = '1MB'", s, { phase: 'deferred', status: 'E' })),
      'refused:25P02',
    );
    assert.equal(kind(decide('select 1', s, { phase: 'cross', status: 'E' })), 'refused:25P02');
    assert.equal(kind(decide('rollback', s, { phase: 'cross', status: 'E' })), 'local');
    // On one node the node says so itself.
    assert.equal(kind(decide('select 1', s, { phase: 'one', status: 'E' })), 'routed:node');
    assert.equal(kind(decide("prepare transaction 'x'", s, { phase: 'one' })), 'refused:0A000');
    // LISTEN keeps its backend for the client (session/pins.ts).
    assert.equal(kind(decide('listen x', s)), 'routed:node');
  });

  test('a statement routing refuses is refused with 0A000', () => {
    assert.equal(
      kind(decide('update orders set tenant_id = 5 where tenant_id = 1', s)),
      'refused:0A000',
    );
  });
});

describe('admit: SERIALIZABLE stays on one node', () => {
  const s = fixtureCatalog();
  const serializable = (phase: TxnPhase, parts: string[]): Txn => ({
    phase,
    parts,
    serializable: true,
  });

  test('a statement that would make it span nodes is refused; on its one node it runs', () => {
    const across = decide('select count(*) from orders', s, serializable('deferred', []));
    assert.equal(kind(across), 'refused:0A000');
    assert.match((across as { error: Error }).error.message, /SERIALIZABLE/);
    assert.equal(
      kind(decide('select * from orders where tenant_id = 1', s, serializable('one', ['n1']))),
      'routed:node',
    );
    assert.equal(
      kind(decide('select * from orders where tenant_id = 2', s, serializable('one', ['n1']))),
      'refused:0A000',
    );
    assert.equal(
      kind(
        decide(
          'update orders set total = 1 where tenant_id in (1, 2)',
          s,
          serializable('one', ['n1']),
        ),
      ),
      'refused:0A000',
    );
    // Statements any node answers go to the transaction's node.
    assert.equal(kind(decide('select 1', s, serializable('one', ['n1']))), 'routed:node');
  });

  test('other isolation levels span nodes', () => {
    const t: Txn = { phase: 'one', parts: ['n1'] };
    assert.equal(kind(decide('select * from orders where tenant_id = 2', s, t)), 'routed:node');
    assert.equal(kind(decide('select count(*) from orders', s, t)), 'routed:scatter');
  });
});
