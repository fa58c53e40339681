// Following Patroni (patroni mode): its REST API's /cluster says who leads and who is a
// synchronous standby. The agent reports that view; the coordinator re-routes on it and never
// promotes. Member addresses are Patroni's host and port (postgresql.connect_address).
import { create, HaViewSchema, type HaView } from '@tessera/proto';

interface PatroniMember {
  name?: string;
  role?: string;
  state?: string;
  host?: string;
  port?: number;
  timeline?: number;
}

interface PatroniCluster {
  members?: PatroniMember[];
}

/** The view from a /cluster document (pure). */
export function patroniView(doc: unknown): HaView {
  const members = ((doc as PatroniCluster | null)?.members ?? []).filter(
    (m): m is PatroniMember => typeof m === 'object' && m !== null,
  );
  const addr = (m: PatroniMember): string => `${m.host ?? ''}:${m.port ?? 5432}`;
  const leader = members.find(
    (m) => (m.role === 'leader' || m.role === 'standby_leader') && m.state === 'running',
  );
  const sync = members.filter((m) => m.role === 'sync_standby').map(addr);
  const states = members.map((m) => `${m.name ?? '?'}=${m.role ?? '?'}/${m.state ?? '?'}`);
  return create(HaViewSchema, {
    leader: leader ? addr(leader) : '',
    syncStandbys: sync,
    phase: states.join(' '),
    changing: leader === undefined,
    timeline: BigInt(leader?.timeline ?? 0),
  });
}

/** Reads /cluster; an unreachable API gives a view with only `error` set. */
export async function readPatroni(baseUrl: string, timeoutMs: number): Promise<HaView> {
  try {
    const res = await fetch(new URL('/cluster', baseUrl), {
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (!res.ok) throw new Error(`GET /cluster answered ${res.status}`);
    return patroniView(await res.json());
  } catch (e) {
    return create(HaViewSchema, {
      error: `cannot read Patroni's /cluster at ${baseUrl}: ${e instanceof Error ? e.message : String(e)}`,
    });
  }
}
