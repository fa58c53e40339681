// Routing of statements that bring rows in (INSERT, COPY FROM): the node each row's key value
// belongs to, one node when they all agree, split by row owner otherwise.
import type { CopyFromAnalysis, InsertAnalysis } from '@tessera/sql';
import type { Snapshot } from '@tessera/keyspace';
import { hashPinValues, type ParamSource } from './key-hash.js';
import { NO_WHERE, routeDml } from './route-dml.js';
import { home, refuse, single, type Route } from './route-types.js';
import { classify, lookupTable, qualified } from './tables.js';

export function routeInsert(
  a: InsertAnalysis,
  catalog: Snapshot,
  params: ParamSource | undefined,
): Route {
  // Classified once per statement and catalog (tables.ts): the target is among its writes.
  const t = classify(a.tables, catalog);
  const targetRef = a.tables[a.targetIndex];
  const target =
    t.writes.find((w) => w.index === a.targetIndex)?.view ??
    lookupTable(catalog, targetRef?.schema, targetRef?.name ?? '');
  if (target.kind !== 'sharded')
    return routeDml(a, a.select?.where ?? NO_WHERE, catalog, params, 'read');
  const other = t.sharded.find((s) => s.index !== a.targetIndex);
  const ks = target.keyspace;
  const onlyOwner = ks.owners.length === 1 ? ks.owners[0]! : undefined;
  if (t.global.length > 0) {
    return refuse(
      `an INSERT into sharded table ${qualified(target)} that reads global table ${qualified(t.global[0]!.view)} is not supported (the global table lives on the home node only)`,
    );
  }
  if (a.onConflict?.updateColumns.includes(target.keyColumn)) {
    return refuse(
      `ON CONFLICT DO UPDATE that changes the key column "${target.keyColumn}" of sharded table ${qualified(target)} is not supported`,
    );
  }
  if (
    onlyOwner !== undefined &&
    (other === undefined || other.view.keyspace.owners.join() === onlyOwner)
  )
    return single(onlyOwner);
  // Colocated with the target or not: decided with the target's columns (insert-select.ts).
  if (a.source === 'select') return { kind: 'insert_select', nodes: ks.owners };
  if (other)
    return refuse(
      `an INSERT into sharded table ${qualified(target)} that reads sharded table ${qualified(other.view)} is not supported yet`,
    );
  if (a.source !== 'values' || a.rows === undefined) {
    return refuse(
      `INSERT ... DEFAULT VALUES into sharded table ${qualified(target)} is not supported (its key column "${target.keyColumn}" needs a value)`,
    );
  }
  if (a.columns === undefined) {
    return refuse(
      `INSERT into sharded table ${qualified(target)} needs a column list naming its key column "${target.keyColumn}"`,
    );
  }
  const keyAt = a.columns.indexOf(target.keyColumn);
  if (keyAt < 0)
    return refuse(
      `INSERT into sharded table ${qualified(target)} must give a value for its key column "${target.keyColumn}"`,
    );
  const byNode = new Map<string, number[]>();
  for (let i = 0; i < a.rows.length; i++) {
    const v = a.rows[i]![keyAt];
    if (v === undefined)
      return refuse(`row ${i + 1} of the INSERT has no value for key column "${target.keyColumn}"`);
    const hashes = hashPinValues([v], ks.keyType, ks.seed, params, 'assign');
    if (hashes === 'params') return { kind: 'params' };
    if (hashes === 'unpinnable') {
      return refuse(
        `the key column "${target.keyColumn}" of row ${i + 1} is not a constant or a parameter, so its node is unknown`,
      );
    }
    const h = hashes[0];
    // A NULL key fails the key's NOT NULL on any node; send it to a fixed one.
    const node = h === null || h === undefined ? ks.ownerOf(0n) : ks.ownerOf(h);
    let rows = byNode.get(node);
    if (!rows) byNode.set(node, (rows = []));
    rows.push(i);
  }
  if (byNode.size === 1) return single([...byNode.keys()][0]!);
  return {
    kind: 'split',
    parts: [...byNode]
      .sort((x, y) => (x[0] < y[0] ? -1 : 1))
      .map(([node, rows]) => ({ node, rows })),
  };
}

/** COPY FROM: STDIN into one node, every node (a reference table), or split by row owner; a server file on home. */
export function routeCopyFrom(a: CopyFromAnalysis, catalog: Snapshot): Route {
  const view = lookupTable(
    catalog,
    a.tables[a.targetIndex]?.schema,
    a.tables[a.targetIndex]?.name ?? '',
  );
  if (a.source !== 'stdin') return home(catalog, false);
  if (view.kind === 'global') return { kind: 'copy', mode: 'node', node: catalog.home };
  if (view.kind === 'reference') return { kind: 'copy', mode: 'all', nodes: catalog.nodes };
  if (view.keyspace.owners.length === 1)
    return { kind: 'copy', mode: 'node', node: view.keyspace.owners[0]! };
  if (a.hasWhere)
    return refuse(`COPY FROM ... WHERE into sharded table ${qualified(view)} is not supported yet`);
  return {
    kind: 'copy',
    mode: 'split',
    nodes: view.keyspace.owners,
    keyColumn: view.keyColumn,
    keyspace: view.keyspace,
    schema: view.schema,
    table: view.name,
  };
}
