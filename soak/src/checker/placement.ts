// Checks of where rows are and what was left behind (docs/soak.md, "Placement"): every row of a
// sharded table is on the node its key's hash belongs to (the hash is Postgres's own, computed on
// the node by the probe), and no node keeps a Tessera slot, publication, subscription or a
// prepared transaction once the cluster has settled (a streaming replica's physical slot is not
// one). Each node's rows must have been read from the primary the catalog names.
import type { FinalState } from './final-state.js';
import type { Findings } from './findings.js';

export function checkPlacement(final: FinalState, out: Findings): { rows: number } {
  let rows = 0;
  const sharded = new Map<string, string>();
  for (const t of final.catalog.tables)
    if (t.kind === 'sharded' && t.keyspace) sharded.set(t.name, t.keyspace);
  for (const [table, keyspace] of sharded) {
    for (const row of final.rowsOf(table)) {
      rows++;
      if (row.hash === undefined) {
        out.add('history-malformed', `a row of ${table} on ${row.node} has no hash`);
        continue;
      }
      const owner = final.ownerOf(keyspace, row.hash);
      if (owner !== row.node)
        out.add(
          'placement-misplaced',
          `${table} row with hash ${row.hash} is on ${row.node}; its range belongs to ${owner ?? 'no node'}`,
        );
    }
  }
  const probed = new Set(final.nodeStates.map((s) => s.node));
  for (const n of final.catalog.nodes)
    if (!probed.has(n.name)) out.add('final-state-missing', `node ${n.name} was not probed`);
  for (const e of final.errors) out.add('final-state-missing', e);
  // After a failover the rows are the promoted instance's: rows read from another one (a stale
  // primary) say nothing about where the cluster keeps them.
  for (const s of final.nodeStates) {
    const n = final.catalog.nodes.find((x) => x.name === s.node);
    if (n && s.instance !== undefined && s.instance !== `${n.host}:${n.port}`)
      out.add(
        'final-state-missing',
        `node ${s.node} was read at ${s.instance}, but the catalog's primary is ${n.host}:${n.port}`,
      );
  }
  for (const s of final.nodeStates) {
    for (const name of s.slots.filter(isTessera))
      out.add('placement-leftover', `replication slot ${name} left on ${s.node}`);
    for (const name of s.publications.filter(isTessera))
      out.add('placement-leftover', `publication ${name} left on ${s.node}`);
    for (const name of s.subscriptions.filter(isTessera))
      out.add('placement-leftover', `subscription ${name} left on ${s.node}`);
    for (const gid of s.prepared)
      out.add('prepared-left', `prepared transaction ${gid} left on ${s.node}`);
  }
  return { rows };
}

const isTessera = (name: string): boolean => name.startsWith('tessera');
