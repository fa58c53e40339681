// What the failover suite concludes from one kill and from the final readback, kept apart from
// the cluster so it can be tested without one: which phases a kill reached (a failover that does
// not complete is a failed kill in the table, not the end of the run), which write is the first
// one after a kill and which errors a client saw before it, and where the acknowledged writes of
// a node are read back from (its primary now, whichever instance that is).
import type { NodeName } from './failover-cluster.js';

/** The phases of one kill, in the order a failover goes through them. */
export interface KillPhases {
  detected: boolean;
  promoted: boolean;
  newAddress: boolean;
  firstWrite: boolean;
}

const PHASE_NAMES: Record<keyof KillPhases, string> = {
  detected: 'detection',
  promoted: 'promotion',
  newAddress: 'new address',
  firstWrite: 'first write',
};

/** Undefined for a kill that went through every phase; else why it failed and how far it got. */
export function killError(p: KillPhases, timeoutMs: number): string | undefined {
  const keys = Object.keys(PHASE_NAMES) as (keyof KillPhases)[];
  const missed = keys.filter((k) => !p[k]);
  if (missed.length === 0) return undefined;
  const reached = keys.filter((k) => p[k]).map((k) => PHASE_NAMES[k]);
  return `failover did not complete within ${Math.round(timeoutMs / 1000)} s: reached ${reached.length > 0 ? reached.join(', ') : 'no phase'}; not ${missed.map((k) => PHASE_NAMES[k]).join(', ')}`;
}

/** One acknowledged write: issued and answered (ms since the epoch), on which node's rows, through whom. */
export interface Ack {
  issuedAt: number;
  at: number;
  node: NodeName;
  /** host:port the writer was connected to: a node's instance, or the router. */
  server: string;
}

export interface WriteError {
  at: number;
  node: NodeName;
  message: string;
}

/** One kill as the writers' numbers are cut by it. */
export interface KillWindow {
  node: NodeName;
  /** Just before the SIGKILL was sent. */
  killedAt: number;
  /** Once the killed instance was gone: a statement issued later cannot have run on it. */
  goneAt: number;
  /** The killed instance's host:port. */
  oldServer: string;
}

/**
 * The first write acknowledged after the kill that cannot have run on the killed instance (issued
 * once it was gone, not to it), and the client errors on the node from the kill until then (all
 * of them since the kill when there is no such write).
 */
export function writesAfterKill(
  acks: readonly Ack[],
  errors: readonly WriteError[],
  k: KillWindow,
): { firstAckAt: number | undefined; errors: WriteError[] } {
  const first = acks.find(
    (a) => a.node === k.node && a.issuedAt >= k.goneAt && a.server !== k.oldServer,
  );
  const firstAckAt = first?.at;
  return {
    firstAckAt,
    errors: errors.filter(
      (e) =>
        e.node === k.node && e.at >= k.killedAt && (firstAckAt === undefined || e.at <= firstAckAt),
    ),
  };
}

/** One Postgres instance of a node, as the readback sees it. */
export interface Instance {
  address: string;
  query<T>(sql: string): Promise<T[]>;
}

export type Readback =
  { kind: 'read'; from: string; lost: number } | { kind: 'unreadable'; reason: string };

/**
 * Counts the acknowledged ids missing from `table` on the node's primary: the instance the
 * catalog names first, else any other that answers and is not in recovery (a replica may lag, so
 * it is never read). A node none of whose instances answers as a primary is unreadable.
 */
export async function readBack(
  instances: readonly Instance[],
  acked: ReadonlySet<number>,
  table: string,
): Promise<Readback> {
  const why: string[] = [];
  for (const s of instances) {
    try {
      const [r] = await s.query<{ standby: boolean }>('select pg_is_in_recovery() as standby');
      if (r?.standby !== false) {
        why.push(`${s.address} is a standby`);
        continue;
      }
      const rows = await s.query<{ id: string }>(`select id::text as id from ${table}`);
      const have = new Set(rows.map((x) => Number(x.id)));
      return {
        kind: 'read',
        from: s.address,
        lost: [...acked].filter((id) => !have.has(id)).length,
      };
    } catch (e) {
      why.push(`${s.address}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  return { kind: 'unreadable', reason: why.join('; ') || 'no instance' };
}
