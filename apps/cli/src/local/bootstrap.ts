// The first `up` of a local cluster: register the three nodes, declare the sample keyspaces and
// tables in the catalog (@tessera/proto's declareShape, which test clusters use too), then create
// role, database and tables on the nodes where each table's kind says (sharded tables fenced by
// `tessera_owns`), and load a little data on the right nodes.
// Every step checks before it acts, so a bootstrap that was interrupted can simply run again.
// With passwords, every node gets the same SCRAM verifier for `app` and `postgres`: the router
// logs in to the nodes with the client's own key (SCRAM pass-through), which needs that.
import type pg from 'pg';
import { createScramVerifier } from '@tessera/pg-wire';
import {
  NodeRole,
  declareShape,
  keyTypeName,
  parseKeyType,
  type Catalog,
  type ClusterShape,
  type Range,
  type ShapeNode,
  type ShapeTable,
} from '@tessera/proto';
import { fenceCheckSql } from '@tessera/keyspace';
import { hashKeyText } from '@tessera/pg-hash';
import type { Coordinator } from '../coordinator.js';
import { LOCAL_NODES, type ClusterFile, type LocalNodeName } from './layout.js';
import type { ClusterPasswords } from './passwords.js';
import { withNode } from './postgres-nodes.js';
import {
  APP_DATABASE,
  APP_PASSWORD,
  APP_ROLE,
  SAMPLE_EVENTS,
  SAMPLE_KEYSPACES,
  SAMPLE_PLANS,
  SAMPLE_TABLES,
  SAMPLE_TENANTS,
  type SampleTable,
} from './sample-schema.js';

export const FENCE_CONSTRAINT = 'tessera_owns';

export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** How the nodes are logged in to, and what `app`'s password becomes on them. */
interface NodeLogins {
  /** The superuser's password; undefined on a trust cluster. */
  superuser: string | undefined;
  /** What CREATE/ALTER ROLE app PASSWORD is given: a SCRAM verifier, or 'app' on a trust cluster. */
  appPassword: string;
}

export async function bootstrap(
  coord: Coordinator,
  cluster: ClusterFile,
  passwords: ClusterPasswords | undefined,
  log: (m: string) => void,
): Promise<void> {
  const catalog = await declareShape(coord, sampleShape(cluster));
  // One verifier (one salt) for every node, made here: the password never reaches a server.
  const logins: NodeLogins = {
    superuser: passwords?.postgres,
    appPassword: passwords ? createScramVerifier(passwords.app) : APP_PASSWORD,
  };
  if (passwords) await alignSuperuserVerifier(cluster, logins);
  for (const n of LOCAL_NODES)
    await createOnNode(n.name, cluster.nodePorts[n.name], catalog, logins);
  log('sample schema created in database app on every node');
  const loaded = await loadSampleData(cluster, catalog, logins);
  if (loaded) log('sample data loaded');
}

/**
 * Gives every node the home node's `postgres` verifier. Nodes made together are copies of one
 * initdb and agree already; one made again later (its directory was lost) got its own salt.
 */
async function alignSuperuserVerifier(cluster: ClusterFile, logins: NodeLogins): Promise<void> {
  const verifierSql = "select rolpassword from pg_authid where rolname = 'postgres'";
  const home = await withNode(cluster.nodePorts.home, 'postgres', logins.superuser, (c) =>
    c.query<{ rolpassword: string | null }>(verifierSql),
  );
  const verifier = home.rows[0]?.rolpassword;
  if (!verifier) return;
  for (const n of LOCAL_NODES) {
    if (n.name === 'home') continue;
    await withNode(cluster.nodePorts[n.name], 'postgres', logins.superuser, async (c) => {
      const { rows } = await c.query<{ rolpassword: string | null }>(verifierSql);
      if (rows[0]?.rolpassword !== verifier)
        await c.query(`alter role postgres password ${literal(verifier)}`);
    });
  }
}

const literal = (text: string): string => `'${text.replaceAll("'", "''")}'`;

/** The local cluster's shape: its three nodes (and replicas) and the sample's declared tables. */
function sampleShape(cluster: ClusterFile): ClusterShape {
  const nodes = LOCAL_NODES.map((n): ShapeNode => {
    const replicaPort = cluster.replicas ? cluster.replicaPorts?.[n.name] : undefined;
    return {
      name: n.name,
      host: '127.0.0.1',
      port: cluster.nodePorts[n.name],
      role: n.role === 'home' ? NodeRole.HOME : NodeRole.DATA,
      // Its name (application_name) is the one the catalog derives, as the base backup used.
      ...(replicaPort !== undefined ? { replicaHost: '127.0.0.1', replicaPort } : {}),
    };
  });
  const keyspaces = SAMPLE_KEYSPACES.map((k) => ({
    name: k.name,
    keyType: parseKeyType(k.type),
    ranges: k.ranges,
  }));
  return { nodes, keyspaces, tables: SAMPLE_TABLES.flatMap(declared) };
}

function declared(t: SampleTable): ShapeTable[] {
  switch (t.kind) {
    case 'sharded':
      return [{ kind: t.kind, name: t.name, keyspace: t.keyspace, keyColumn: t.keyColumn }];
    case 'reference':
      return [{ kind: t.kind, name: t.name }];
    case 'global':
      return []; // a table the catalog does not name is global
  }
}

/** Whether a table of this kind lives on this node (DESIGN.md section 2, "table"). */
function livesOn(t: SampleTable, node: LocalNodeName): boolean {
  return t.kind !== 'global' || node === 'home';
}

/** The CHECK expression of the fence: the key's hash in one of the ranges the node owns. */
export function fenceExpression(
  catalog: Catalog,
  keyspace: string,
  keyColumn: string,
  node: string,
): string {
  const ks = catalog.keyspaces.find((k) => k.name === keyspace);
  if (!ks) throw new Error(`keyspace ${keyspace} is missing from the catalog`);
  // Owning nothing gives `false`: no row may be written there.
  const owned = catalog.ranges.filter((r) => r.keyspace === keyspace && r.owner === node);
  return fenceCheckSql(quoteIdent(keyColumn), keyTypeName(ks.keyType), ks.seed, owned);
}

async function createOnNode(
  node: LocalNodeName,
  port: number,
  catalog: Catalog,
  logins: NodeLogins,
): Promise<void> {
  await withNode(port, 'postgres', logins.superuser, async (c) => {
    const role = await c.query('select 1 from pg_roles where rolname = $1', [APP_ROLE]);
    const password = literal(logins.appPassword);
    await c.query(
      role.rowCount === 0
        ? `create role ${APP_ROLE} login password ${password}`
        : `alter role ${APP_ROLE} password ${password}`,
    );
    const db = await c.query('select 1 from pg_database where datname = $1', [APP_DATABASE]);
    if (db.rowCount === 0) await c.query(`create database ${APP_DATABASE} owner ${APP_ROLE}`);
  });
  await withNode(port, APP_DATABASE, logins.superuser, async (c) => {
    await c.query('begin');
    for (const t of SAMPLE_TABLES) {
      if (!livesOn(t, node)) continue;
      await c.query(t.ddl);
      if (t.kind === 'sharded') {
        // NOT VALID: instant, and the rows already there were placed by the same catalog.
        const check = fenceExpression(catalog, t.keyspace, t.keyColumn, node);
        await c.query(
          `alter table ${quoteIdent(t.name)} drop constraint if exists ${FENCE_CONSTRAINT}, ` +
            `add constraint ${FENCE_CONSTRAINT} check (${check}) not valid`,
        );
      }
    }
    // Tables stay owned by the superuser: the app may read and write rows, not drop a fence.
    await c.query(
      `grant select, insert, update, delete on all tables in schema public to ${APP_ROLE}`,
    );
    await c.query(`grant usage, select on all sequences in schema public to ${APP_ROLE}`);
    await c.query('commit');
  });
}

/** The node owning `hash` in a keyspace, from the catalog's ranges. */
export function ownerOf(
  ranges: readonly Range[],
  keyspace: string,
  hash: bigint,
): string | undefined {
  return ranges.find((r) => r.keyspace === keyspace && r.lo <= hash && hash <= r.hi)?.owner;
}

/**
 * Puts each sample row on the node that owns its key. Returns false (and loads nothing) when an
 * owner is not one of the local nodes, since a row in the wrong place is worse than none.
 */
async function loadSampleData(
  cluster: ClusterFile,
  catalog: Catalog,
  logins: NodeLogins,
): Promise<boolean> {
  const seedOf = (name: string) => catalog.keyspaces.find((k) => k.name === name)?.seed ?? 0n;
  const portOf = (owner: string | undefined): number | undefined =>
    owner !== undefined && Object.hasOwn(cluster.nodePorts, owner)
      ? cluster.nodePorts[owner as LocalNodeName]
      : undefined;

  const tenantRows = SAMPLE_TENANTS.map((t) => ({
    t,
    port: portOf(
      ownerOf(catalog.ranges, 'tenants', hashKeyText('bigint', t.id.toString(), seedOf('tenants'))),
    ),
  }));
  const eventRows = SAMPLE_EVENTS.map((e) => ({
    e,
    port: portOf(ownerOf(catalog.ranges, 'events', hashKeyText('uuid', e.id, seedOf('events')))),
  }));
  if ([...tenantRows, ...eventRows].some((r) => r.port === undefined)) return false;

  const sql = new Map<number, ((c: pg.Client) => Promise<unknown>)[]>();
  const on = (port: number, f: (c: pg.Client) => Promise<unknown>) =>
    sql.set(port, [...(sql.get(port) ?? []), f]);
  for (const n of LOCAL_NODES) {
    for (const p of SAMPLE_PLANS) {
      on(cluster.nodePorts[n.name], (c) =>
        c.query('insert into plans values ($1, $2, $3) on conflict do nothing', [
          p.id,
          p.name,
          p.monthlyPriceCents,
        ]),
      );
    }
  }
  on(cluster.nodePorts.home, (c) =>
    c.query(
      `insert into audit_log (action) select 'sample schema loaded by tessera up'
        where not exists (select 1 from audit_log)`,
    ),
  );
  for (const { t, port } of tenantRows) {
    on(port as number, (c) =>
      c.query(
        'insert into tenants (id, name, plan_id) values ($1, $2, $3) on conflict do nothing',
        [t.id.toString(), t.name, t.planId],
      ),
    );
    for (const o of t.orders) {
      on(port as number, (c) =>
        c.query(
          'insert into orders (tenant_id, id, amount_cents, status) values ($1, $2, $3, $4) on conflict do nothing',
          [t.id.toString(), o.id.toString(), o.amountCents.toString(), o.status],
        ),
      );
    }
  }
  for (const { e, port } of eventRows) {
    on(port as number, (c) =>
      c.query(
        'insert into events (id, tenant_id, kind, payload) values ($1, $2, $3, $4) on conflict do nothing',
        [e.id, e.tenantId.toString(), e.kind, JSON.stringify(e.payload)],
      ),
    );
  }
  for (const [port, statements] of sql) {
    await withNode(port, APP_DATABASE, logins.superuser, async (c) => {
      for (const s of statements) await s(c);
    });
  }
  return true;
}
