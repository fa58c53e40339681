// What the failover engine knows about one node when it decides: the catalog's node (primary
// address, replicas and their states) and the latest report of each of its instances' agents,
// with its age. Shared by the pure deciders (decide.ts, sync-plan.ts, follow.ts).
import type { AgentReport, Node, Replica } from '@tessera/proto';

export interface Seen {
  report: AgentReport;
  ageMs: number;
}

export interface NodeView {
  node: Node;
  /** The report of the agent at the node's primary address. */
  primary: Seen | undefined;
  /** Reports of the agents at its replicas' addresses, by host:port. */
  replicas: ReadonlyMap<string, Seen>;
  /** A report older than this is stale: the agent may be gone. */
  freshMs: number;
}

export const addressOf = (x: { host: string; port: number }): string => `${x.host}:${x.port}`;

export function isFresh(s: Seen | undefined, freshMs: number): s is Seen {
  return s !== undefined && s.ageMs <= freshMs;
}

/** The fresh report of a replica's agent. */
export function replicaSeen(view: NodeView, r: Replica): Seen | undefined {
  const s = view.replicas.get(addressOf(r));
  return isFresh(s, view.freshMs) ? s : undefined;
}

/** `X/Y` (pg_lsn text) as a number; -1 for '' or anything else. */
export function lsnValue(text: string): bigint {
  const m = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/.exec(text.trim());
  if (!m) return -1n;
  return (BigInt(`0x${m[1]}`) << 32n) + BigInt(`0x${m[2]}`);
}
