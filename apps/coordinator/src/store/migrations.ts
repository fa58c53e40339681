// The catalog's schema in the `tessera` schema of the catalog database (DESIGN.md section 2), as
// numbered, append-only migrations. Safe to run from two coordinators at once: each run takes a
// transaction-scoped advisory lock first, so the second one finds everything already applied.
import type pg from 'pg';

/** Key of the advisory lock that serializes migrations (distinct from the leader lock). */
const MIGRATION_LOCK = [0x74657373, 2] as const; // 'tess', 2

interface Migration {
  version: number;
  sql: string;
}

// Never edit a migration that has shipped; add the next one.
const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    sql: `
      create table if not exists tessera.meta (
        singleton boolean primary key default true check (singleton),
        epoch bigint not null,
        cluster_uid text not null
      );
      -- Epoch 1 is the empty cluster, so a watcher asking for after_epoch=0 gets it at once.
      insert into tessera.meta (singleton, epoch, cluster_uid)
        values (true, 1, gen_random_uuid()::text)
        on conflict do nothing;

      create table if not exists tessera.node (
        name text primary key,
        host text not null,
        port int not null check (port between 1 and 65535),
        role text not null check (role in ('home', 'data')),
        state text not null check (state in ('joining', 'active', 'draining', 'removed')),
        replica_host text not null default '',
        replica_port int not null default 0,
        unique (host, port)
      );
      -- Exactly one home: at most one by this index, at least one by the admin rules.
      create unique index if not exists node_one_home on tessera.node ((true)) where role = 'home';

      create table if not exists tessera.keyspace (
        name text primary key,
        key_type text not null check (key_type in ('bigint', 'int', 'smallint', 'text', 'uuid')),
        seed bigint not null default 0
      );

      create table if not exists tessera.range (
        keyspace text not null references tessera.keyspace (name) on delete cascade,
        lo bigint not null,
        hi bigint not null,
        owner text not null references tessera.node (name),
        state text not null check (state in ('active', 'frozen')),
        primary key (keyspace, lo),
        check (lo <= hi)
      );

      create table if not exists tessera.dist_table (
        schema_name text not null,
        name text not null,
        kind text not null check (kind in ('sharded', 'reference', 'global')),
        keyspace text references tessera.keyspace (name),
        key_column text,
        primary key (schema_name, name),
        check ((kind = 'sharded') = (keyspace is not null and key_column is not null))
      );

      create table if not exists tessera.router (
        id text primary key,
        address text not null,
        last_heartbeat timestamptz not null default now(),
        acked_epoch bigint not null default 0
      );

      create table if not exists tessera.job (
        id bigserial primary key,
        kind text not null,
        state text not null check (state in ('pending', 'running', 'done', 'failed', 'cancelled')),
        spec jsonb not null,
        error text not null default '',
        claimed_by text not null default '',
        created_at timestamptz not null default clock_timestamp(),
        updated_at timestamptz not null default clock_timestamp()
      );
      create index if not exists job_pending on tessera.job (id) where state = 'pending';

      create table if not exists tessera.job_step (
        job_id bigint not null references tessera.job (id) on delete cascade,
        idx int not null,
        name text not null,
        state text not null check (state in ('pending', 'running', 'done', 'failed', 'cancelled')),
        progress jsonb not null default '{}',
        primary key (job_id, idx)
      );

      create table if not exists tessera.txn_decision (
        txid text primary key,
        decision text not null check (decision in ('commit', 'abort')),
        participants text[] not null,
        decided_at timestamptz not null default clock_timestamp()
      );
    `,
  },
  {
    // The mover (issue 16): job leases, phases, results and parents; cleanup records written
    // before every object a job creates on a node; moves in progress (in the catalog snapshot);
    // router leases.
    version: 2,
    sql: `
      alter table tessera.job drop constraint if exists job_state_check;
      alter table tessera.job add constraint job_state_check check (state in
        ('pending', 'running', 'done', 'failed', 'cancelled', 'cancelling', 'verify_failed'));
      alter table tessera.job
        add column if not exists lease_until timestamptz,
        add column if not exists phase text not null default '',
        add column if not exists result jsonb not null default '{}',
        add column if not exists takeovers int not null default 0,
        add column if not exists committed boolean not null default false,
        add column if not exists parent_id bigint references tessera.job (id);
      create index if not exists job_parent on tessera.job (parent_id) where parent_id is not null;
      create index if not exists job_live on tessera.job (id) where state in ('running', 'cancelling');

      create table if not exists tessera.job_cleanup (
        job_id bigint not null references tessera.job (id) on delete cascade,
        node text not null,
        database text not null,
        kind text not null,
        name text not null,
        policy text not null check (policy in ('always', 'on_failure', 'on_success')),
        detail jsonb not null default '{}',
        done boolean not null default false,
        seq bigserial,
        created_at timestamptz not null default clock_timestamp(),
        primary key (job_id, node, database, kind, name)
      );

      create table if not exists tessera.range_move (
        keyspace text not null references tessera.keyspace (name) on delete cascade,
        lo bigint not null,
        hi bigint not null,
        job_id bigint not null references tessera.job (id),
        source text not null references tessera.node (name),
        target text not null references tessera.node (name),
        primary key (keyspace, lo),
        check (lo <= hi)
      );

      alter table tessera.router
        add column if not exists lease_until timestamptz,
        add column if not exists gone_below_epoch bigint not null default 0,
        add column if not exists deregistered boolean not null default false;
    `,
  },
  {
    // Failover (DESIGN.md section 7): every replica of a node with its state (the durable sync set
    // is the rows in state sync), a node's failover and degradation, who decides its failovers,
    // and the address of the active coordinator (which a standby names to its callers).
    version: 3,
    sql: `
      create table if not exists tessera.replica (
        node text not null references tessera.node (name) on delete cascade,
        host text not null,
        port int not null check (port between 1 and 65535),
        name text not null,
        state text not null check (state in ('catching_up', 'sync', 'fenced', 'rejoining')),
        primary key (host, port)
      );
      create unique index if not exists replica_name on tessera.replica (node, name);
      insert into tessera.replica (node, host, port, name, state)
        select n.name, n.replica_host, n.replica_port,
               left(lower(regexp_replace(n.name || '_' || n.replica_host || '_' || n.replica_port,
                                         '[^a-zA-Z0-9_]', '_', 'g')), 63),
               'catching_up'
          from tessera.node n where n.replica_host <> ''
        on conflict do nothing;
      alter table tessera.node
        drop column replica_host,
        drop column replica_port,
        add column failing_over boolean not null default false,
        add column failover_target text not null default '',
        add column degraded boolean not null default false,
        add column degraded_reason text not null default '',
        add column degraded_since timestamptz,
        add column ha_mode text not null default 'native'
          check (ha_mode in ('native', 'patroni', 'cnpg'));

      create table if not exists tessera.active_coordinator (
        singleton boolean primary key default true check (singleton),
        address text not null,
        since timestamptz not null default clock_timestamp()
      );
    `,
  },
  {
    // Cluster-wide sequences (store/sequence-blocks.ts): per sequence, the next value no router
    // has been given yet. numeric, so a block ending at the sequence's bound cannot overflow.
    version: 4,
    sql: `
      create table if not exists tessera.sequence_block (
        sequence text primary key,
        next numeric not null
      );
    `,
  },
];

export const LATEST_SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;

/** Brings the catalog schema up to date; returns the versions it applied (empty when current). */
export async function migrate(client: pg.ClientBase): Promise<number[]> {
  const applied: number[] = [];
  await client.query('begin');
  try {
    await client.query('select pg_advisory_xact_lock($1, $2)', [...MIGRATION_LOCK]);
    await client.query('create schema if not exists tessera');
    await client.query(
      `create table if not exists tessera.schema_version (
         version int primary key,
         applied_at timestamptz not null default now()
       )`,
    );
    const { rows } = await client.query<{ v: number | null }>(
      'select max(version) as v from tessera.schema_version',
    );
    const current = rows[0]?.v ?? 0;
    if (current > LATEST_SCHEMA_VERSION) {
      throw new Error(
        `the catalog schema is at version ${current}, newer than this coordinator knows (${LATEST_SCHEMA_VERSION}); upgrade the coordinator`,
      );
    }
    for (const m of MIGRATIONS) {
      if (m.version <= current) continue;
      await client.query(m.sql);
      await client.query('insert into tessera.schema_version (version) values ($1)', [m.version]);
      applied.push(m.version);
    }
    await client.query('commit');
  } catch (e) {
    await client.query('rollback').catch(() => undefined);
    throw e;
  }
  return applied;
}
