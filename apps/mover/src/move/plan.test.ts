// decidePlan on hand-made facts: every check refuses with its one sentence, warnings stay
// warnings, and a healthy move gets every step, its rows and bytes and an estimate.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import type { DatabaseFacts, MoveFacts, NodeFacts, TableFacts } from './facts.js';
import { decidePlan } from './plan.js';

const LIMITS = {
  cutoverBudgetMs: 2000,
  catchupBudgetMs: 20,
  deleteRowsPerSec: 50_000,
  preparedWaitMs: 30_000,
};

function node(name: string, over: Partial<NodeFacts> = {}): NodeFacts {
  return {
    name,
    walLevel: 'logical',
    maxSlots: 20,
    usedSlots: 0,
    maxWalSenders: 20,
    usedWalSenders: 0,
    maxSlotWalKeepSize: '4096',
    maxLogicalWorkers: 4,
    usedLogicalWorkers: 0,
    isSuperuser: true,
    canReplicate: true,
    prepared: [],
    diskFreeBytes: 100 * 2 ** 30,
    diskTotalBytes: 200 * 2 ** 30,
    ...over,
  };
}

function table(over: Partial<TableFacts> = {}): TableFacts {
  return {
    schema: 'public',
    name: 'orders',
    keyColumn: 'tenant_id',
    replicaIdentity: 'd',
    identityColumns: ['tenant_id', 'id'],
    relkind: 'r',
    partitionOf: null,
    columns: ['amount', 'id', 'tenant_id'],
    rows: 150_000,
    bytes: 40 * 1024 * 1024,
    estimated: false,
    onTarget: true,
    ...over,
  };
}

function facts(over: Partial<MoveFacts> = {}, dbs?: DatabaseFacts[]): MoveFacts {
  return {
    keyspace: { name: 'tenants', keyType: 'bigint', seed: 0n },
    lo: -9223372036854775808n,
    range: { hi: -1n, owner: 'data1', frozen: false },
    target: 'data2',
    targetActive: true,
    source: node('data1'),
    targetFacts: node('data2'),
    databases: dbs ?? [{ name: 'app', tables: [table()] }],
    preparedWaitedMs: 0,
    ...over,
  };
}

function refusedFor(f: MoveFacts, check: string): string {
  const plan = decidePlan(f, LIMITS);
  const c = plan.checks.find((x) => x.name === check && !x.ok);
  assert.ok(c, `expected check ${check} to refuse; checks: ${JSON.stringify(plan.checks)}`);
  assert.ok(plan.refusals.includes(c.sentence));
  assert.ok(!c.sentence.includes('\n') && c.sentence.length < 400, c.sentence);
  return c.sentence;
}

test('a healthy move: no refusal, every step, rows, bytes and an estimate', () => {
  const plan = decidePlan(facts(), LIMITS);
  assert.deepEqual(plan.refusals, []);
  assert.equal(plan.steps.length, 8);
  assert.match(plan.steps[0]!, /^plan:/);
  assert.match(plan.steps[4]!, /^cutover .*at most 2000 ms/);
  assert.equal(plan.rows, 150_000);
  assert.equal(plan.bytes, 40 * 1024 * 1024);
  assert.equal(plan.estimate.copySeconds, 1);
  assert.equal(plan.estimate.verifySeconds, 0.3);
  assert.equal(plan.estimate.deleteSeconds, 3);
  assert.equal(plan.source, 'data1');
  assert.equal(plan.databases[0]!.tables[0]!.columns.join(), 'amount,id,tenant_id');
});

test('the key not in the replica identity is refused with the fix', () => {
  const s = refusedFor(
    facts({}, [{ name: 'app', tables: [table({ identityColumns: ['id'] })] }]),
    'replica identity',
  );
  assert.match(s, /replica identity \(id\), which does not contain its key column tenant_id/);
  assert.match(s, /UPDATE and DELETE on it would fail/);
  assert.match(s, /REPLICA IDENTITY USING INDEX/);
  const none = refusedFor(
    facts({}, [{ name: 'app', tables: [table({ replicaIdentity: 'n', identityColumns: null })] }]),
    'replica identity',
  );
  assert.match(none, /has no replica identity/);
  // FULL contains every column: allowed, with a warning about its cost.
  const full = decidePlan(
    facts({}, [
      {
        name: 'app',
        tables: [table({ replicaIdentity: 'f', identityColumns: ['amount', 'id', 'tenant_id'] })],
      },
    ]),
    LIMITS,
  );
  assert.deepEqual(full.refusals, []);
  assert.match(full.warnings.join(' '), /REPLICA IDENTITY FULL/);
});

test('a partitioned table or a partition is refused; an ordinary table passes', () => {
  const parent = refusedFor(
    facts({}, [{ name: 'app', tables: [table({ name: 'events', relkind: 'p' })] }]),
    'partitioning',
  );
  assert.match(
    parent,
    /^table public\.events \(database app\) is partitioned; moving ranges of partitioned tables is not supported yet: .*FROM ONLY/,
  );
  const child = refusedFor(
    facts({}, [
      { name: 'app', tables: [table({ name: 'events_0', partitionOf: 'public.events' })] },
    ]),
    'partitioning',
  );
  assert.match(
    child,
    /^table public\.events_0 \(database app\) is a partition of public\.events; /,
  );
  const plan = decidePlan(facts(), LIMITS);
  assert.ok(plan.checks.some((c) => c.name === 'partitioning' && c.ok));
});

test('pending prepared transactions are refused: ours after the wait, others at once', () => {
  const ours = refusedFor(
    facts({
      source: node('data1', {
        prepared: [{ gid: 'tessera:u:r-1:data1', database: 'app', preparedMs: 1, tessera: true }],
      }),
    }),
    'prepared transactions',
  );
  assert.match(ours, /1 pending Tessera prepared transaction\(s\) \(oldest tessera:u:r-1:data1\)/);
  assert.match(ours, /within 30 s/);
  const theirs = refusedFor(
    facts({
      source: node('data1', {
        prepared: [{ gid: 'app-42', database: 'app', preparedMs: 1, tessera: false }],
      }),
    }),
    'prepared transactions',
  );
  assert.match(theirs, /'app-42'.*that Tessera did not make/);
});

test('node settings and headroom are each refused with one sentence', () => {
  assert.match(
    refusedFor(facts({ source: node('data1', { walLevel: 'replica' }) }), 'wal_level'),
    /wal_level=replica; a move needs wal_level=logical/,
  );
  assert.match(
    refusedFor(facts({ source: node('data1', { usedSlots: 20 }) }), 'replication slots'),
    /0 free replication slots of 20; the move needs 1 \(one per database\)/,
  );
  assert.match(
    refusedFor(facts({ source: node('data1', { usedWalSenders: 20 }) }), 'wal senders'),
    /0 free WAL senders/,
  );
  assert.match(
    refusedFor(
      facts({ source: node('data1', { maxSlotWalKeepSize: '-1' }) }),
      'max_slot_wal_keep_size',
    ),
    /max_slot_wal_keep_size=-1 \(unlimited\)/,
  );
  assert.match(
    refusedFor(
      facts({ targetFacts: node('data2', { usedLogicalWorkers: 4 }) }),
      'logical replication workers',
    ),
    /0 free logical replication workers of 4; the move needs at least 1/,
  );
  assert.match(
    refusedFor(facts({ targetFacts: node('data2', { isSuperuser: false }) }), 'privileges'),
    /not a superuser on data2/,
  );
  assert.match(
    refusedFor(facts({ source: node('data1', { canReplicate: false }) }), 'privileges'),
    /may not replicate from data1/,
  );
});

test('disk on the target: refused when short, a warning when it cannot be seen', () => {
  const s = refusedFor(
    facts({
      targetFacts: node('data2', { diskFreeBytes: 10 * 2 ** 30, diskTotalBytes: 200 * 2 ** 30 }),
    }),
    'disk',
  );
  assert.match(s, /has 10\.0 GB free but the move needs about 20\.1 GB/);
  const unseen = decidePlan(
    facts({ targetFacts: node('data2', { diskFreeBytes: undefined, diskTotalBytes: undefined }) }),
    LIMITS,
  );
  assert.deepEqual(unseen.refusals, []);
  assert.match(unseen.warnings.join(' '), /free disk of data2 cannot be seen/);
});

test('the range and the target: missing, already there, frozen, inactive', () => {
  assert.match(
    refusedFor(facts({ range: undefined, source: undefined, targetFacts: undefined }), 'range'),
    /has no range starting at/,
  );
  assert.match(
    refusedFor(facts({ range: { hi: -1n, owner: 'data2', frozen: false } }), 'range'),
    /already owned by data2/,
  );
  assert.match(
    refusedFor(facts({ range: { hi: -1n, owner: 'data1', frozen: true } }), 'range'),
    /frozen by another cutover/,
  );
  assert.match(refusedFor(facts({ targetActive: false }), 'target'), /not an active node/);
});

test('a keyspace without tables moves by catalog and fences only', () => {
  const plan = decidePlan(facts({}, []), LIMITS);
  assert.deepEqual(plan.refusals, []);
  assert.equal(plan.rows, 0);
  assert.match(plan.warnings.join(' '), /only changes the catalog and the fences/);
});
