// Moves in progress as routers see them (Catalog.moves): DDL on a table of a keyspace with a move
// in progress would break the move's replication, so it is refused with SQLSTATE 55006
// (object_not_in_prerequisite_state) and a hint naming the job. Pure: the router's DDL path calls
// ddlRefusalForMove with the keyspace of each table a DDL statement touches.
import type { Catalog, RangeMove } from './catalog.js';

/** A move in progress, as the catalog lists it. */
export type MoveInProgress = RangeMove;

export interface DdlRefusal {
  code: '55006';
  message: string;
  hint: string;
}

/** The moves of each keyspace, from a catalog snapshot. */
export function movesByKeyspace(
  catalog: Pick<Catalog, 'moves'>,
): ReadonlyMap<string, readonly MoveInProgress[]> {
  const out = new Map<string, MoveInProgress[]>();
  for (const m of catalog.moves ?? []) {
    const list = out.get(m.keyspace) ?? [];
    list.push(m);
    out.set(m.keyspace, list);
  }
  return out;
}

/** The refusal for DDL on `table` (of `keyspace`) while a move of that keyspace runs, if one does. */
export function ddlRefusalForMove(
  moves: ReadonlyMap<string, readonly MoveInProgress[]>,
  keyspace: string,
  table: string,
): DdlRefusal | undefined {
  const m = moves.get(keyspace)?.[0];
  if (!m) return undefined;
  return {
    code: '55006',
    message: `table ${table} cannot be changed while job ${m.jobId} moves range ${keyspace}:${m.lo} from ${m.source} to ${m.target}`,
    hint: `wait for the move to finish (tessera jobs watch ${m.jobId}) or cancel it (tessera jobs cancel ${m.jobId}), then run the DDL again`,
  };
}
