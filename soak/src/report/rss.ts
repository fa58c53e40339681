// Memory of every service, sampled every 10 s from /proc: for a Node.js service its RSS and the
// anonymous part of it (RssAnon: heap, JIT code, malloc), for a Postgres node the proportional
// set size (Pss) summed over its postmaster and backends (RSS would count the shared buffers once
// per backend), split into anonymous and shared memory, with the number of processes summed.
// What the samples say about growth is growth.ts.
import { readFileSync } from 'node:fs';

export interface RssSample {
  s: number;
  name: string;
  kind: string;
  /** The service's main pid: a new pid is a new lifetime (restarted by a fault). */
  pid: number;
  /** RSS (a Node.js service) or Pss summed over its processes (a Postgres node). */
  kb: number;
  /** The anonymous part: RssAnon, or Pss_Anon summed. */
  anonKb: number;
  /** The shared-memory part: RssShmem, or Pss_Shmem summed (shared buffers touched). */
  shmemKb: number;
  /** Processes summed over: 1, or the postmaster and its children. */
  processes: number;
}

type Field = 'VmRSS' | 'RssAnon' | 'RssShmem' | 'Pss' | 'Pss_Anon' | 'Pss_Shmem';

/** The fields of /proc/PID/status (Vm*, Rss*) or smaps_rollup (Pss*), in kB; 0 when gone. */
export function readKb<F extends Field>(pid: number, fields: readonly F[]): Record<F, number> {
  const out = Object.fromEntries(fields.map((f) => [f, 0])) as Record<F, number>;
  const smaps = fields.some((f) => f.startsWith('Pss'));
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/${smaps ? 'smaps_rollup' : 'status'}`, 'utf8');
  } catch {
    return out;
  }
  for (const f of fields) {
    const m = new RegExp(`^${f}:\\s+(\\d+) kB`, 'm').exec(text);
    if (m) out[f] = Number(m[1]);
  }
  return out;
}

const PSS_FIELDS = ['Pss', 'Pss_Anon', 'Pss_Shmem'] as const;
const STATUS_FIELDS = ['VmRSS', 'RssAnon', 'RssShmem'] as const;

export function sampleOnce(
  s: number,
  services: readonly { name: string; kind: string; pids: number[] }[],
): RssSample[] {
  const out: RssSample[] = [];
  for (const svc of services) {
    const main = svc.pids[0];
    if (main === undefined) continue;
    let sample: Omit<RssSample, 's' | 'name' | 'kind' | 'pid'>;
    if (svc.kind === 'postgres') {
      const each = svc.pids.map((pid) => readKb(pid, PSS_FIELDS)).filter((x) => x.Pss > 0);
      const sum = (f: (typeof PSS_FIELDS)[number]): number => each.reduce((a, x) => a + x[f], 0);
      sample = {
        kb: sum('Pss'),
        anonKb: sum('Pss_Anon'),
        shmemKb: sum('Pss_Shmem'),
        processes: each.length,
      };
    } else {
      const x = readKb(main, STATUS_FIELDS);
      sample = { kb: x.VmRSS, anonKb: x.RssAnon, shmemKb: x.RssShmem, processes: 1 };
    }
    if (sample.kb > 0) out.push({ s, name: svc.name, kind: svc.kind, pid: main, ...sample });
  }
  return out;
}
