// Routing of COPY ... TO: the rows a table or query reads, from wherever they live. A sharded
// table with several owners is read from each of them and joined at the router (a read across
// nodes: execute/copy-out.ts); a query is routed as the read it is.
import type { Analysis, CopyToAnalysis } from '@tessera/sql';
import type { Snapshot } from '@tessera/keyspace';
import type { ParamSource } from './key-hash.js';
import { NO_WHERE, routeDml } from './route-dml.js';
import { refuse, type Route } from './route-types.js';
import { lookupTable, qualified } from './tables.js';

/** `routeQuery`: route() itself, passed in (route.ts dispatches here). */
export function routeCopyTo(
  a: CopyToAnalysis,
  catalog: Snapshot,
  params: ParamSource | undefined,
  routeQuery: (q: Analysis) => Route,
): Route {
  if (a.query !== undefined) {
    const inner = routeQuery(a.query);
    if (inner.kind === 'scatter' && a.destination !== 'stdout') return toServer('its query');
    return inner;
  }
  const ref = a.tables[a.tableIndex ?? 0];
  const view = ref === undefined ? undefined : lookupTable(catalog, ref.schema, ref.name);
  if (view?.kind === 'sharded' && view.keyspace.owners.length > 1) {
    if (a.destination !== 'stdout') return toServer(`sharded table ${qualified(view)}`);
    return { kind: 'scatter', nodes: view.keyspace.owners };
  }
  return routeDml(a, NO_WHERE, catalog, params, 'read');
}

function toServer(what: string): Route {
  return refuse(
    `COPY TO a file or program on the server is not supported when ${what} reads rows on several nodes; copy TO STDOUT (psql: \\copy)`,
  );
}
