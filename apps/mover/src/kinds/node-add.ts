// `tessera nodes add NAME HOST:PORT` on a cluster that has tables: the new server is made ready
// before any router sends it anything, then joins in one step.
//   check     it runs with wal_level=logical and max_prepared_transactions > 0, as a superuser
//   roles     every role of the home node, with its SCRAM verifier and memberships
//   schema    every database and table definition of a data node (or the declared tables of
//             home), fences owning nothing
//   reference every reference table copied from home by a subscription, kept in sync
//   activate  writers of reference tables paused on home (EXCLUSIVE lock, reads go on), the
//             marker seen on the new node, the subscription dropped, the node active in the
//             catalog, every router's ack, the pause lifted. From then on routers write the
//             reference tables there themselves.
import { keyspaceInfo, referenceTables, shardedTables } from '../move/catalog-view.js';
import { NodeRole, NodeState, type Catalog } from '@tessera/proto';
import type pg from 'pg';
import { JobFailed } from '../errors.js';
import type { JobKind } from '../job/kind.js';
import type { JobRuntime } from '../job/runtime.js';
import { runCleanup } from '../move/cleanup.js';
import { databasesOf } from '../move/facts.js';
import { writeFence } from '../pg/fences.js';
import { ensureMarkerRow, ensureMarkerTable, markerRoundTrip } from '../pg/marker.js';
import { createSubscription, subscriptionStatus, dropSubscription } from '../pg/replication.js';
import { applyDump, dumpSchema } from '../pg/schema.js';
import { ident, literal, qualified, type NodeAddr } from '../nodes/sessions.js';
import { MARKER_TABLE } from '../move/names.js';
import { copyRoles } from '../pg/roles.js';

export interface NodeAddSpec {
  name: string;
  host: string;
  port: number;
}

const STEPS = ['check', 'roles', 'schema', 'reference', 'activate'];
const objectName = (jobId: bigint, i: number) => `tessera_ref_${jobId}_${i}`;

function homeOf(catalog: Catalog): NodeAddr {
  const h = catalog.nodes.find((n) => n.role === NodeRole.HOME);
  if (!h) throw new JobFailed('the cluster has no home node');
  return { name: h.name, host: h.host, port: h.port };
}

/** The node whose definitions the new node copies: an active data node, else home. */
function schemaSource(catalog: Catalog): { node: NodeAddr; isHome: boolean } {
  const d = catalog.nodes.find((n) => n.role === NodeRole.DATA && n.state === NodeState.ACTIVE);
  if (d) return { node: { name: d.name, host: d.host, port: d.port }, isHome: false };
  return { node: homeOf(catalog), isHome: true };
}

/** Databases the new node needs: those of the source holding a declared table. */
async function appDatabases(rt: JobRuntime, catalog: Catalog, source: NodeAddr): Promise<string[]> {
  const declared = catalog.tables.map((t) => qualified(t.schema, t.name));
  const out: string[] = [];
  for (const db of await databasesOf(rt, source)) {
    const has = await rt.nodes.with(source, db, async (c) => {
      const r = await c.query<{ n: number }>(
        `select count(to_regclass(t))::int as n from unnest($1::text[]) t`,
        [declared],
      );
      return r.rows[0]!.n > 0;
    });
    if (has) out.push(db);
  }
  return out;
}

async function check(rt: JobRuntime, node: NodeAddr, catalog: Catalog): Promise<void> {
  if (catalog.nodes.some((n) => n.name === node.name && n.state === NodeState.ACTIVE))
    throw new JobFailed(`node ${node.name} is already in the cluster`);
  const other = catalog.nodes.find(
    (n) => n.host === node.host && n.port === node.port && n.name !== node.name,
  );
  if (other) throw new JobFailed(`${node.host}:${node.port} is already node ${other.name}`);
  const s = await rt.nodes.with(node, 'postgres', async (c) => {
    const { rows } = await c.query<{ name: string; setting: string }>(
      `select name, setting from pg_settings where name in ('wal_level', 'max_prepared_transactions')
       union all select 'superuser', rolsuper::text from pg_roles where rolname = current_user`,
    );
    return new Map(rows.map((r) => [r.name, r.setting]));
  });
  if (s.get('wal_level') !== 'logical')
    throw new JobFailed(
      `${node.host}:${node.port} runs with wal_level=${s.get('wal_level')}; a Tessera node needs wal_level=logical (set it and restart)`,
    );
  if (Number(s.get('max_prepared_transactions') ?? 0) <= 0)
    throw new JobFailed(
      `${node.host}:${node.port} has max_prepared_transactions=0; a Tessera node needs it above 0 for cross-node transactions (set it and restart)`,
    );
  if (s.get('superuser') !== 'true')
    throw new JobFailed(`the mover's role is not a superuser on ${node.host}:${node.port}`);
}

async function schema(rt: JobRuntime, node: NodeAddr, catalog: Catalog): Promise<string[]> {
  const { node: source, isHome } = schemaSource(catalog);
  const dbs = await appDatabases(rt, catalog, source);
  const owners = await rt.nodes.with(
    source,
    'postgres',
    async (c) =>
      new Map(
        (
          await c.query<{ datname: string; owner: string }>(
            'select datname, pg_get_userbyid(datdba) as owner from pg_database',
          )
        ).rows.map((r) => [r.datname, r.owner]),
      ),
  );
  for (const db of dbs) {
    await rt.nodes.with(node, 'postgres', async (c) => {
      const found = await c.query('select 1 from pg_database where datname = $1', [db]);
      if (found.rowCount === 0)
        await c.query(`create database ${ident(db)} owner ${ident(owners.get(db) ?? 'postgres')}`);
    });
    // Home also holds global tables: from it, only the declared tables.
    const sql = await dumpSchema(rt.nodes.auth, source, db, {
      excludeSchemas: ['tessera'],
      ...(isHome
        ? { tables: catalog.tables.map((t) => ({ schema: t.schema, name: t.name })) }
        : {}),
    });
    await rt.nodes.with(node, db, async (c) => {
      const present = await c.query<{ n: number }>(
        `select count(*)::int as n from pg_class c join pg_namespace n on n.oid = c.relnamespace
          where c.relkind in ('r', 'p') and n.nspname not in ('pg_catalog', 'information_schema', 'tessera')`,
      );
      await c.query('create schema if not exists tessera');
      // The fences call these: the new node owns nothing yet.
      for (const ks of catalog.keyspaces)
        await writeFence(c, keyspaceInfo(catalog, ks.name), [], []);
      if (present.rows[0]!.n === 0) await applyDump(c, sql);
      for (const ks of catalog.keyspaces)
        await writeFence(c, keyspaceInfo(catalog, ks.name), [], shardedTables(catalog, ks.name));
      await ensureMarkerTable(c);
    });
  }
  return dbs;
}

async function reference(
  rt: JobRuntime,
  node: NodeAddr,
  catalog: Catalog,
  dbs: string[],
): Promise<void> {
  const home = homeOf(catalog);
  const refs = referenceTables(catalog);
  for (const [i, db] of dbs.entries()) {
    const name = objectName(rt.id, i);
    const present = await rt.nodes.with(home, db, async (c) => {
      const out: string[] = [];
      for (const t of refs) {
        const r = await c.query<{ oid: number | null }>('select to_regclass($1)::oid as oid', [
          qualified(t.schema, t.name),
        ]);
        if (r.rows[0]?.oid != null) out.push(qualified(t.schema, t.name));
      }
      return out;
    });
    if (present.length === 0) continue;
    await rt.recordCleanup({
      node: home.name,
      database: db,
      kind: 'marker',
      name: rt.id.toString(),
      policy: 'always',
    });
    await rt.recordCleanup({
      node: home.name,
      database: db,
      kind: 'publication',
      name,
      policy: 'always',
    });
    await rt.nodes.with(home, db, async (c) => {
      await ensureMarkerTable(c);
      await ensureMarkerRow(c, rt.id);
      const found = await c.query('select 1 from pg_publication where pubname = $1', [name]);
      if (found.rowCount === 0)
        await c.query(
          `create publication ${ident(name)} for table ${present.join(', ')}, ${MARKER_TABLE} where (job_id = ${rt.id})`,
        );
    });
    await rt.recordCleanup({ node: home.name, database: db, kind: 'slot', name, policy: 'always' });
    const at = JSON.stringify({ host: node.host, port: node.port });
    await rt.recordCleanup({
      node: node.name,
      database: db,
      kind: 'subscription',
      name,
      policy: 'always',
      detailJson: at,
    });
    await rt.recordCleanup({
      node: node.name,
      database: db,
      kind: 'marker',
      name: rt.id.toString(),
      policy: 'always',
      detailJson: at,
    });
    await rt.nodes.with(node, db, async (c) => {
      if (await subscriptionStatus(c, name)) return;
      // Nobody writes here yet (the node is not in the catalog): start the copy from empty.
      await c.query(`truncate ${present.join(', ')}`);
      await c.query(`delete from ${MARKER_TABLE} where job_id = $1`, [rt.id.toString()]);
      await createSubscription(c, name, rt.nodes.conninfo(home, db, name));
    });
    for (;;) {
      rt.checkpoint();
      const s = await rt.nodes.with(node, db, (c) => subscriptionStatus(c, name));
      if (!s) throw new JobFailed(`the subscription ${name} on the new node vanished`);
      if (!s.enabled)
        throw new JobFailed(
          `copying the reference tables to ${node.name} stopped after an error (see its server log)`,
        );
      if (s.states.every((x) => x.state === 'r')) break;
      await rt.sleep(100);
    }
  }
}

async function lockReferenceTables(c: pg.Client, tables: string[]): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    await c.query('begin');
    try {
      await c.query(`set local lock_timeout = ${literal('2s')}`);
      await c.query(`lock table ${tables.join(', ')} in exclusive mode`);
      return;
    } catch (e) {
      await c.query('rollback').catch(() => undefined);
      if ((e as { code?: string }).code !== '55P03' || attempt >= 10) throw e;
    }
  }
}

/** Cancels sessions waiting for our reference-table locks whose statement began before `since`. */
async function cancelOldWaiters(c: pg.Client, since: string): Promise<number> {
  const { rows } = await c.query<{ n: number }>(
    `select count(pg_cancel_backend(a.pid))::int as n
       from pg_locks l join pg_stat_activity a on a.pid = l.pid
      where not l.granted and l.locktype = 'relation'
        and l.relation in (select relation from pg_locks where pid = pg_backend_pid() and locktype = 'relation')
        and a.query_start < $1::timestamptz`,
    [since],
  );
  return rows[0]!.n;
}

async function activate(
  rt: JobRuntime,
  node: NodeAddr,
  spec: NodeAddSpec,
  dbs: string[],
): Promise<void> {
  const catalog = await rt.catalog();
  if (catalog.nodes.some((n) => n.name === spec.name && n.state === NodeState.ACTIVE)) {
    await runCleanup(rt, ['always']);
    return;
  }
  const home = homeOf(catalog);
  const refs = referenceTables(catalog).map((t) => qualified(t.schema, t.name));
  const locks: pg.Client[] = [];
  try {
    for (const [i, db] of dbs.entries()) {
      const name = objectName(rt.id, i);
      const sub = await rt.nodes.with(node, db, (c) => subscriptionStatus(c, name));
      if (!sub) continue;
      const h = await rt.nodes.connect(home, db, `job ${rt.id} handover`);
      locks.push(h);
      const present = (
        await h.query<{ t: string }>(
          'select t from unnest($1::text[]) t where to_regclass(t) is not null',
          [refs],
        )
      ).rows.map((r) => r.t);
      await lockReferenceTables(h, present);
      const a = await rt.nodes.connect(home, db);
      const b = await rt.nodes.connect(node, db);
      try {
        if ((await markerRoundTrip(a, b, rt.id, 30_000)) === undefined)
          throw new JobFailed(
            `the new node did not catch up with the reference tables within 30 s`,
          );
        await dropSubscription(b, name);
      } finally {
        await a.end().catch(() => undefined);
        await b.end().catch(() => undefined);
      }
    }
    const since = locks[0]
      ? (await locks[0].query<{ t: string }>('select clock_timestamp()::text as t')).rows[0]!.t
      : '';
    for (const h of locks) await cancelOldWaiters(h, since);
    const change = await rt.call(() =>
      rt.coord.jobs.changeNode({
        jobId: rt.id,
        moverId: rt.moverId,
        name: spec.name,
        state: NodeState.ACTIVE,
        host: spec.host,
        port: spec.port,
      }),
    );
    for (;;) {
      const w = await rt.call(() =>
        rt.coord.jobs.awaitEpoch({ epoch: change.epoch, timeoutMs: 5_000n }),
      );
      if (w.reached) break;
      rt.log.warn({ waitingFor: w.waitingFor }, 'routers have not acknowledged the new node yet');
    }
    // Statements admitted before the new node was in the catalog write only the old nodes: any
    // still waiting for the lock would miss the new node, so they are cancelled (retryable).
    for (const h of locks) await cancelOldWaiters(h, since);
    for (const h of locks) await h.query('commit');
  } finally {
    for (const h of locks) await h.end().catch(() => undefined);
  }
  await runCleanup(rt, ['always']);
}

export const nodeAddKind: JobKind = {
  kind: 'node-add',
  steps: () => STEPS,
  async run(rt) {
    const spec = rt.spec<NodeAddSpec>();
    const node: NodeAddr = { name: spec.name, host: spec.host, port: spec.port };
    if (!rt.isDone('check')) {
      await rt.phase('checking', 'check');
      await check(rt, node, await rt.catalog());
      await rt.done('check');
    }
    if (!rt.isDone('roles')) {
      await rt.phase('copying roles', 'roles');
      const catalog = await rt.catalog();
      const n = await copyRoles(rt.nodes, homeOf(catalog), node);
      await rt.done('roles', { roles: n });
    }
    if (!rt.isDone('schema')) {
      await rt.phase('copying schema', 'schema');
      const dbs = await schema(rt, node, await rt.catalog());
      await rt.done('schema', { databases: dbs });
    }
    const dbs = rt.step('schema').progress['databases'] as string[];
    if (!rt.isDone('reference')) {
      await rt.phase('copying reference tables', 'reference');
      await reference(rt, node, await rt.catalog(), dbs);
      await rt.done('reference');
    }
    if (!rt.isDone('activate')) {
      await rt.phase('activating', 'activate');
      await activate(rt, node, spec, dbs);
      await rt.done('activate');
    }
    return { state: 'done', result: { node: spec.name, databases: dbs } };
  },
  async undo(rt) {
    // The node never joined (activation is the last step): its copied roles and schema stay on
    // that server, harmless; the replication objects go.
    await runCleanup(rt, ['always', 'on_failure']);
  },
};
