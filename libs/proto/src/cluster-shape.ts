// The shape of a cluster as its catalog declares it (nodes, keyspaces, sharded and reference
// tables), and the one function that declares it through the coordinator's AdminService.
// It lives here, not in @tessera/testkit, because production declares with it too: `tessera up`
// bootstraps its sample cluster through it, and the CLI ships without testkit (a test-only
// dependency); testcluster's startCluster, the router, mover and 2PC tests and the benches use it alike.
import type { AdminService } from './gen/tessera/v1/admin_pb.js';
import {
  CatalogService,
  type Catalog,
  type KeyType,
  type NodeRole,
} from './gen/tessera/v1/catalog_pb.js';
import { createClient, type Client } from './client.js';

export interface ShapeNode {
  name: string;
  host: string;
  port: number;
  role: NodeRole;
  /** The node's streaming replica, if it has one (AddNodeRequest's replica fields). */
  replicaHost?: string;
  replicaPort?: number;
  replicaName?: string;
}

export interface ShapeKeyspace {
  name: string;
  keyType: KeyType;
  /** Equal ranges to start with, owned round-robin by the data nodes. */
  ranges: number;
  /** Seed of the key's hash; 0 unless given. */
  seed?: bigint;
}

/** Global tables are not declared: a table the catalog does not name is global. */
export type ShapeTable =
  | { kind: 'sharded'; schema?: string; name: string; keyspace: string; keyColumn: string }
  | { kind: 'reference'; schema?: string; name: string };

export interface ClusterShape {
  nodes?: readonly ShapeNode[];
  keyspaces?: readonly ShapeKeyspace[];
  tables?: readonly ShapeTable[];
}

/** One AdminService call that declaring a shape makes. */
export type ShapeStep =
  | { call: 'addNode'; request: ShapeNode }
  | { call: 'createKeyspace'; request: Required<ShapeKeyspace> }
  | {
      call: 'distributeTable';
      request: { schema: string; name: string; keyspace: string; keyColumn: string };
    }
  | { call: 'referenceTable'; request: { schema: string; name: string } };

/** What declaring needs of the coordinator: the four admin calls and a catalog read. */
export interface ShapeClients {
  admin: Pick<
    Client<typeof AdminService>,
    'addNode' | 'createKeyspace' | 'distributeTable' | 'referenceTable'
  >;
  catalog: Pick<Client<typeof CatalogService>, 'getCatalog'>;
}

/**
 * The calls that bring `catalog` to `shape`, in the order the coordinator needs (nodes, then
 * keyspaces, then tables): only what the catalog does not name yet. Something already there is
 * left as it is, even if it differs: changing a catalog is the CLI's commands' work, not this.
 */
export function shapeSteps(shape: ClusterShape, catalog: Catalog): ShapeStep[] {
  const steps: ShapeStep[] = [];
  for (const node of shape.nodes ?? []) {
    if (catalog.nodes.some((n) => n.name === node.name)) continue;
    steps.push({ call: 'addNode', request: node });
  }
  for (const ks of shape.keyspaces ?? []) {
    if (catalog.keyspaces.some((k) => k.name === ks.name)) continue;
    steps.push({ call: 'createKeyspace', request: { ...ks, seed: ks.seed ?? 0n } });
  }
  for (const t of shape.tables ?? []) {
    const schema = t.schema ?? 'public';
    if (catalog.tables.some((x) => x.schema === schema && x.name === t.name)) continue;
    steps.push(tableStep(t, schema));
  }
  return steps;
}

function tableStep(t: ShapeTable, schema: string): ShapeStep {
  switch (t.kind) {
    case 'sharded':
      return {
        call: 'distributeTable',
        request: { schema, name: t.name, keyspace: t.keyspace, keyColumn: t.keyColumn },
      };
    case 'reference':
      return { call: 'referenceTable', request: { schema, name: t.name } };
    default:
      return assertNever(t);
  }
}

async function run(admin: ShapeClients['admin'], step: ShapeStep): Promise<void> {
  switch (step.call) {
    case 'addNode':
      return void (await admin.addNode(step.request));
    case 'createKeyspace':
      return void (await admin.createKeyspace(step.request));
    case 'distributeTable':
      return void (await admin.distributeTable(step.request));
    case 'referenceTable':
      return void (await admin.referenceTable(step.request));
    default:
      return assertNever(step);
  }
}

/**
 * Declares `shape` in the coordinator's catalog. Every step checks before it acts, so declaring
 * again (after an interrupted `tessera up`, or on a catalog that has it) does nothing twice.
 * Resolves with the catalog as it is afterwards.
 */
export async function declareShape(clients: ShapeClients, shape: ClusterShape): Promise<Catalog> {
  const before = await clients.catalog.getCatalog({});
  const steps = shapeSteps(shape, before);
  for (const step of steps) await run(clients.admin, step);
  return steps.length === 0 ? before : clients.catalog.getCatalog({});
}

function assertNever(x: never): never {
  throw new Error(`unexpected ${JSON.stringify(x)}`);
}

/**
 * Whether a coordinator answers GetCatalog at `address` within `timeoutMs` (a standby answers
 * UNAVAILABLE: not ready).
 */
export async function coordinatorAnswers(address: string, timeoutMs = 2_000): Promise<boolean> {
  const client = createClient(CatalogService, address, { deadlineMs: timeoutMs });
  try {
    await client.getCatalog({});
    return true;
  } catch {
    return false;
  } finally {
    client.close();
  }
}
