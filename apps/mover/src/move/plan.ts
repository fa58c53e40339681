// Deciding a move from its facts (move/facts.ts): every check with one sentence, the refusals,
// the steps the move will take, the rows and bytes to copy, and an estimated time. Pure, so
// each refusal is tested without a cluster (plan.test.ts); `tessera range move --plan` prints it.
import type { KeyTypeName } from '@tessera/keyspace';
import type { MoveFacts, TableFacts } from './facts.js';
import type { MovePlan, PlanCheck, PlannedDatabase } from './spec.js';

export interface PlanLimits {
  cutoverBudgetMs: number;
  catchupBudgetMs: number;
  deleteRowsPerSec: number;
  preparedWaitMs: number;
}

/** Measured rates this estimate assumes (research/moves.md; bench/ measures the real ones). */
const COPY_ROWS_PER_SEC = 150_000;
const COPY_BYTES_PER_SEC = 40 * 1024 * 1024;
const DIGEST_ROWS_PER_SEC = 1_000_000;
const UNTHROTTLED_DELETE_ROWS_PER_SEC = 200_000;

function bytesText(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['kB', 'MB', 'GB', 'TB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(1)} ${units[i]}`;
}

export function decidePlan(f: MoveFacts, limits: PlanLimits): MovePlan {
  const checks: PlanCheck[] = [];
  const warnings: string[] = [];
  const check = (name: string, ok: boolean, sentence: string) =>
    checks.push({ name, ok, sentence });
  const ks = f.keyspace.name;
  const r = f.range;
  const source = r?.owner ?? '';
  const dbCount = Math.max(1, f.databases.length);

  // --- the range and the nodes ---
  if (!r) {
    check(
      'range',
      false,
      `keyspace ${ks} has no range starting at ${f.lo}; see tessera range list ${ks}`,
    );
  } else if (r.owner === f.target) {
    check(
      'range',
      false,
      `range ${ks}:${f.lo} is already owned by ${f.target}; there is nothing to move`,
    );
  } else if (r.frozen) {
    check(
      'range',
      false,
      `range ${ks}:${f.lo} is frozen by another cutover; wait for it to finish`,
    );
  } else {
    check('range', true, `range ${ks}:[${f.lo}, ${r.hi}] is owned by ${r.owner}`);
  }
  check(
    'target',
    f.targetActive,
    f.targetActive
      ? `node ${f.target} is active`
      : `node ${f.target} is not an active node of the cluster, so it cannot own a range (tessera nodes list)`,
  );

  const s = f.source;
  const t = f.targetFacts;
  if (s && t) {
    check(
      'wal_level',
      s.walLevel === 'logical',
      s.walLevel === 'logical'
        ? `node ${s.name} runs with wal_level=logical`
        : `node ${s.name} runs with wal_level=${s.walLevel}; a move needs wal_level=logical (set it in its postgresql.conf and restart it)`,
    );
    // One slot per database, made by the mover, copied in and then streamed from; its WAL sender
    // serves the copy's snapshot first and the subscription after (no table-sync slots).
    const slotsNeeded = dbCount;
    const freeSlots = s.maxSlots - s.usedSlots;
    check(
      'replication slots',
      freeSlots >= slotsNeeded,
      freeSlots >= slotsNeeded
        ? `node ${s.name} has ${freeSlots} free replication slots of ${s.maxSlots} (the move needs ${slotsNeeded})`
        : `node ${s.name} has ${freeSlots} free replication slots of ${s.maxSlots}; the move needs ${slotsNeeded} (one per database): raise max_replication_slots or drop unused slots`,
    );
    const freeSenders = s.maxWalSenders - s.usedWalSenders;
    check(
      'wal senders',
      freeSenders >= slotsNeeded,
      freeSenders >= slotsNeeded
        ? `node ${s.name} has ${freeSenders} free WAL senders of ${s.maxWalSenders}`
        : `node ${s.name} has ${freeSenders} free WAL senders of ${s.maxWalSenders}; the move needs ${slotsNeeded}: raise max_wal_senders`,
    );
    const keepSet = s.maxSlotWalKeepSize !== '-1';
    check(
      'max_slot_wal_keep_size',
      keepSet,
      keepSet
        ? `node ${s.name} caps the WAL a slot may hold (max_slot_wal_keep_size=${s.maxSlotWalKeepSize} MB)`
        : `node ${s.name} has max_slot_wal_keep_size=-1 (unlimited), so a stalled move could fill its disk with WAL; set it (for example 4GB) and reload`,
    );
    // The subscription's apply worker only: with the rows copied by the mover it starts no
    // table-sync worker.
    const freeWorkers = t.maxLogicalWorkers - t.usedLogicalWorkers;
    check(
      'logical replication workers',
      freeWorkers >= dbCount,
      freeWorkers >= dbCount
        ? `node ${t.name} has ${freeWorkers} free logical replication workers of ${t.maxLogicalWorkers}`
        : `node ${t.name} has ${freeWorkers} free logical replication workers of ${t.maxLogicalWorkers}; the move needs at least ${dbCount}: raise max_logical_replication_workers (and max_worker_processes)`,
    );
    check(
      'privileges',
      t.isSuperuser && s.canReplicate,
      t.isSuperuser && s.canReplicate
        ? `the mover's role is a superuser on ${t.name} and may replicate from ${s.name}`
        : !t.isSuperuser
          ? `the mover's role is not a superuser on ${t.name}, and Postgres 15 lets only superusers create subscriptions: use a superuser for --node-user`
          : `the mover's role may not replicate from ${s.name}: give it REPLICATION (or use a superuser)`,
    );
    const foreign = s.prepared.filter((p) => !p.tessera);
    const ours = s.prepared.filter((p) => p.tessera);
    if (foreign.length > 0) {
      check(
        'prepared transactions',
        false,
        `node ${s.name} has prepared transaction '${foreign[0]!.gid}' (database ${foreign[0]!.database}) that Tessera did not make; it blocks the move's replication slot: COMMIT PREPARED or ROLLBACK PREPARED it`,
      );
    } else if (ours.length > 0) {
      check(
        'prepared transactions',
        false,
        `node ${s.name} has ${ours.length} pending Tessera prepared transaction(s) (oldest ${ours[0]!.gid}) that 2PC recovery did not resolve within ${Math.round(limits.preparedWaitMs / 1000)} s; they block the move's replication slot: see tessera txn list and tessera txn resolve`,
      );
    } else {
      check('prepared transactions', true, `node ${s.name} has no pending prepared transactions`);
    }
  }

  // --- the tables ---
  const databases: PlannedDatabase[] = [];
  let rows = 0;
  let bytes = 0;
  for (const db of f.databases) {
    for (const tab of db.tables) {
      const name = `${tab.schema}.${tab.name}`;
      const parted = partitioningRefusal(tab, name, db.name, ks);
      check(
        'partitioning',
        parted === undefined,
        parted ?? `table ${name} (database ${db.name}) is neither partitioned nor a partition`,
      );
      const cols = tab.identityColumns;
      let ok: boolean;
      let sentence: string;
      if (tab.replicaIdentity === 'f') {
        ok = true;
        sentence = `table ${name} (database ${db.name}) has REPLICA IDENTITY FULL, which contains its key ${tab.keyColumn}`;
        warnings.push(
          `table ${name} has REPLICA IDENTITY FULL: every UPDATE and DELETE logs the whole row, and on Postgres 15 the target applies each with a scan; a unique index with ${tab.keyColumn} is much cheaper`,
        );
      } else if (cols === null || cols.length === 0) {
        ok = false;
        sentence = `table ${name} (database ${db.name}) has no replica identity, so every UPDATE and DELETE on it would fail while the move's publication exists: add a primary key or ALTER TABLE ${name} REPLICA IDENTITY USING INDEX <a unique index containing ${tab.keyColumn}>`;
      } else if (!cols.includes(tab.keyColumn)) {
        ok = false;
        sentence = `table ${name} (database ${db.name}) has replica identity (${cols.join(', ')}), which does not contain its key column ${tab.keyColumn}, so every UPDATE and DELETE on it would fail while the move's publication exists: ALTER TABLE ${name} REPLICA IDENTITY USING INDEX <a unique index containing ${tab.keyColumn}> (or REPLICA IDENTITY FULL)`;
      } else {
        ok = true;
        sentence = `table ${name} (database ${db.name}) has its key ${tab.keyColumn} in its replica identity (${cols.join(', ')})`;
      }
      check('replica identity', ok, sentence);
      if (tab.estimated)
        warnings.push(`the rows of ${name} are estimated from a 1% sample (the table is large)`);
      rows += tab.rows;
      bytes += tab.bytes;
    }
    databases.push({
      name: db.name,
      tables: db.tables.map((tab) => ({
        schema: tab.schema,
        name: tab.name,
        keyColumn: tab.keyColumn,
        rows: tab.rows,
        bytes: tab.bytes,
        missingOnTarget: !tab.onTarget,
        columns: tab.columns,
      })),
    });
  }

  // --- disk on the target ---
  if (t) {
    const need = Math.ceil(bytes * 1.5 + (t.diskTotalBytes ?? 0) * 0.1);
    if (t.diskFreeBytes === undefined) {
      warnings.push(
        `the free disk of ${t.name} cannot be seen from the mover's machine; make sure it has room for ${bytesText(Math.ceil(bytes * 1.5))} more`,
      );
    } else {
      const ok = t.diskFreeBytes >= need;
      check(
        'disk',
        ok,
        ok
          ? `node ${t.name} has ${bytesText(t.diskFreeBytes)} free (the move needs about ${bytesText(need)}, 1.5 times the range plus 10% of the disk)`
          : `node ${t.name} has ${bytesText(t.diskFreeBytes)} free but the move needs about ${bytesText(need)} (1.5 times the range's ${bytesText(bytes)} plus 10% of the disk): free some space or move a smaller range`,
      );
    }
  }

  if (f.databases.length === 0 && r)
    warnings.push(
      `no table of keyspace ${ks} exists on ${source}: the move only changes the catalog and the fences`,
    );
  if (f.preparedWaitedMs > 1_000)
    warnings.push(
      `waited ${Math.round(f.preparedWaitedMs / 1000)} s for 2PC recovery on ${source}`,
    );

  const copySeconds = Math.max(rows / COPY_ROWS_PER_SEC, bytes / COPY_BYTES_PER_SEC);
  const verifySeconds = (2 * rows) / DIGEST_ROWS_PER_SEC;
  const deleteSeconds =
    rows /
    (limits.deleteRowsPerSec > 0 ? limits.deleteRowsPerSec : UNTHROTTLED_DELETE_ROWS_PER_SEC);
  const hi = r?.hi ?? f.lo;
  const range = `${ks}:[${f.lo}, ${hi}]`;
  const missing = databases.flatMap((d) =>
    d.tables.filter((x) => x.missingOnTarget).map((x) => `${d.name}/${x.schema}.${x.name}`),
  );
  const steps = [
    `plan: check both nodes and every table of ${ks} (done)`,
    `prepare: declare the move in the catalog (DDL on ${ks}'s tables is refused until it ends)` +
      (missing.length > 0 ? `; create ${missing.join(', ')} on ${f.target}` : '') +
      `; give ${source} and ${f.target} the function-based fence; delete stale rows of the range on ${f.target}; widen ${f.target}'s fence to the range; publish the range on ${source} (row filter on the key's hash)`,
    `copy: create the move's slot on ${source} exporting its snapshot, COPY ${rows} rows, ${bytesText(bytes)} in it to ${f.target} (binary where the types allow; about ${copySeconds.toFixed(1)} s), then subscribe on ${f.target} to stream from the slot`,
    `sync: stream changes until 3 marker round trips in a row take at most ${limits.catchupBudgetMs} ms`,
    `cutover (writes of ${range} held, at most ${limits.cutoverBudgetMs} ms or abort and retry): freeze the range, wait for every router's ack, narrow ${source}'s fence (CREATE OR REPLACE FUNCTION, no table lock), wait for writers that began before, marker round trip, take verification snapshots, owner := ${f.target} (still frozen), wait for every router's ack, release`,
    `verify: per chunk, row count and two order-independent digests on both snapshots (about ${verifySeconds.toFixed(1)} s)`,
    `teardown: drop the subscription, its slot and the publication`,
    `delete: remove the range's rows from ${source} in batches (about ${deleteSeconds.toFixed(1)} s), then VACUUM; end the move in the catalog`,
  ];
  const refusals = checks.filter((c) => !c.ok).map((c) => c.sentence);
  return {
    keyspace: ks,
    keyType: f.keyspace.keyType satisfies KeyTypeName,
    seed: f.keyspace.seed.toString(),
    lo: f.lo.toString(),
    hi: hi.toString(),
    source,
    target: f.target,
    databases,
    rows,
    bytes,
    checks,
    refusals,
    warnings,
    steps,
    estimate: {
      copySeconds: round(copySeconds),
      verifySeconds: round(verifySeconds),
      deleteSeconds: round(deleteSeconds),
      totalSeconds: round(copySeconds + verifySeconds + deleteSeconds + 1),
    },
  };
}

const round = (x: number) => Math.round(x * 10) / 10;

/**
 * Why `tab` cannot be moved for being partitioned or a partition, or undefined. A partitioned
 * table's rows live in its partitions: the copy's SELECT ... FROM ONLY reads none of them, and
 * Postgres 15 refuses a publication's row filter on it (without publish_via_partition_root). The
 * move copies and publishes each table on its own, not a partition tree, so a partition is refused
 * too.
 */
function partitioningRefusal(
  tab: TableFacts,
  name: string,
  database: string,
  keyspace: string,
): string | undefined {
  const keep = `so keep the ranges of keyspace ${keyspace} where they are`;
  if (tab.relkind === 'p')
    return `table ${name} (database ${database}) is partitioned; moving ranges of partitioned tables is not supported yet: the move's copy (SELECT ... FROM ONLY) would read none of its rows and Postgres 15 refuses the publication's row filter on it, ${keep} or make ${name} an ordinary table`;
  if (tab.partitionOf !== null)
    return `table ${name} (database ${database}) is a partition of ${tab.partitionOf}; moving ranges of partitioned tables is not supported yet: the move copies and publishes each table on its own, not its partition tree, ${keep} or make ${tab.partitionOf} an ordinary table`;
  return undefined;
}
