// The final state a soak run recorded after healing every fault (docs/soak.md, "Final-state
// probe"): the catalog, every row of every sharded table as each node holds it (with the hash
// Postgres itself computes for its key), and what each node has left behind. The checker uses
// the last complete probe in the history.
import type { HistoryEvent } from './history.js';

export interface CatalogRecord {
  epoch: string;
  nodes: { name: string; host: string; port: number; role: string }[];
  keyspaces: { name: string; keyType: string; seed: string }[];
  ranges: { keyspace: string; lo: string; hi: string; owner: string }[];
  tables: { schema: string; name: string; kind: string; keyspace?: string; keyColumn?: string }[];
}

export interface NodeRows {
  node: string;
  table: string;
  columns: string[];
  rows: unknown[][];
}

export interface NodeState {
  node: string;
  /** The catalog address of the instance read (histories before replicas have none). */
  instance?: string;
  prepared: string[];
  /** Logical slots (before replicas: every slot). */
  slots: string[];
  /** A streaming replica's physical slots: never a leftover. */
  physicalSlots?: string[];
  publications: string[];
  subscriptions: string[];
}

export interface Row {
  node: string;
  /** Column name -> value as recorded. */
  get(column: string): unknown;
  /** The key's hash as Postgres computed it on the node (column `h`). */
  hash: bigint | undefined;
}

export interface FinalState {
  probe: number;
  catalog: CatalogRecord;
  nodeRows: NodeRows[];
  nodeStates: NodeState[];
  errors: string[];
  /** Rows of a table on every node. */
  rowsOf(table: string): Row[];
  /** The node a hash belongs to in a keyspace, by the catalog's ranges. */
  ownerOf(keyspace: string, hash: bigint): string | undefined;
  /** Rows of a table that are on the node owning their key (misplaced copies left out). */
  ownedRowsOf(table: string, keyspace: string): Row[];
}

interface ProbeParts {
  ended: boolean;
  catalog?: CatalogRecord;
  nodeRows: NodeRows[];
  nodeStates: NodeState[];
  errors: string[];
}

/** The last probe that ended, or undefined when the history has none. */
export function lastFinalState(meta: readonly HistoryEvent[]): FinalState | undefined {
  const probes = new Map<number, ProbeParts>();
  for (const e of meta) {
    if (e.process !== 'probe') continue;
    const v = (e.value ?? {}) as Record<string, unknown>;
    const n = typeof v.probe === 'number' ? v.probe : 0;
    let p = probes.get(n);
    if (!p) probes.set(n, (p = { ended: false, nodeRows: [], nodeStates: [], errors: [] }));
    switch (e.f) {
      case 'catalog':
        p.catalog = v.catalog as CatalogRecord;
        break;
      case 'node-rows':
        p.nodeRows.push(v as unknown as NodeRows);
        break;
      case 'node-state':
        p.nodeStates.push(v as unknown as NodeState);
        break;
      case 'probe-error':
        p.errors.push(String(v.message ?? 'unknown error'));
        break;
      case 'probe-end':
        p.ended = true;
        break;
      default:
        break;
    }
  }
  const done = [...probes.entries()].filter(([, p]) => p.ended && p.catalog !== undefined);
  if (done.length === 0) return undefined;
  const [probe, parts] = done.reduce((a, b) => (b[0] > a[0] ? b : a));
  return finalState(probe, parts);
}

function finalState(probe: number, p: ProbeParts): FinalState {
  const catalog = p.catalog!;
  const ranges = new Map<string, { lo: bigint; hi: bigint; owner: string }[]>();
  for (const r of catalog.ranges) {
    const list = ranges.get(r.keyspace) ?? [];
    list.push({ lo: BigInt(r.lo), hi: BigInt(r.hi), owner: r.owner });
    ranges.set(r.keyspace, list);
  }
  const ownerOf = (keyspace: string, hash: bigint): string | undefined =>
    ranges.get(keyspace)?.find((r) => r.lo <= hash && hash <= r.hi)?.owner;
  const rowsOf = (table: string): Row[] => {
    const out: Row[] = [];
    for (const nr of p.nodeRows) {
      if (nr.table !== table) continue;
      const at = new Map(nr.columns.map((c, i) => [c, i]));
      const hi = at.get('h');
      for (const values of nr.rows) {
        const h = hi === undefined ? undefined : values[hi];
        out.push({
          node: nr.node,
          get: (c) => {
            const i = at.get(c);
            return i === undefined ? undefined : values[i];
          },
          hash: typeof h === 'string' || typeof h === 'number' ? BigInt(h) : undefined,
        });
      }
    }
    return out;
  };
  return {
    probe,
    catalog,
    nodeRows: p.nodeRows,
    nodeStates: p.nodeStates,
    errors: p.errors,
    rowsOf,
    ownerOf,
    ownedRowsOf: (table, keyspace) =>
      rowsOf(table).filter((r) => r.hash !== undefined && ownerOf(keyspace, r.hash) === r.node),
  };
}
