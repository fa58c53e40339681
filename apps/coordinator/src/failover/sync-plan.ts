// Keeping a native node's durable sync set (pure), Patroni-style: the catalog's replicas in state
// sync are exactly the ones every acknowledged commit waited for. The primary's
// synchronous_standby_names is `FIRST n (the sync set)`, so each member must ack every commit.
// - A replica joins: it is named first (Postgres then waits for it too), and it is recorded sync
//   only once it streams as `sync` with everything written before it was named flushed.
// - A replica is lost: with durability preferred it leaves the catalog's set (and the node is
//   recorded degraded) before it leaves synchronous_standby_names, so the primary commits alone
//   only when no replica can be mistaken for synchronous; with required, commits keep waiting.
// One step at a time; the engine applies it and asks again with fresh reports.
import { ReplicaState, type AgentReport, type Replica, type StandbyStatus } from '@tessera/proto';
import type { DurabilityText } from '../config.js';
import { lsnValue } from './facts.js';
import type { Node } from '@tessera/proto';

export interface Adding {
  name: string;
  /** The primary's LSN once its synchronous_standby_names named the replica. */
  lsn0?: bigint;
}

export interface SyncInput {
  node: Node;
  /** A fresh report of the primary's agent: reachable, a primary. */
  primary: AgentReport;
  durability: DurabilityText;
  /** How long each replica (by name) has not been streaming, in ms (absent: it streams). */
  notStreamingMs: ReadonlyMap<string, number>;
  /** A replica stops streaming for longer than this before it counts as lost. */
  graceMs: number;
  adding: Adding | undefined;
  /** Flush lag under which a streaming replica may join the set. */
  catchUpBytes: bigint;
}

export type StateChange = { replica: Replica; state: 'catching_up' | 'sync' };

export type SyncStep =
  | { kind: 'none' }
  | { kind: 'names'; value: string; reason: string }
  | {
      kind: 'record';
      states: StateChange[];
      degraded?: { on: boolean; reason: string };
      reason: string;
    }
  | { kind: 'adding'; adding: Adding | undefined; reason: string };

/** Whether `name` streams from the primary and replied lately (a frozen one stops replying). */
export function streaming(primary: AgentReport, name: string): StandbyStatus | undefined {
  const row = primary.standbys.find((s) => s.applicationName === name);
  if (!row || row.state !== 'streaming') return undefined;
  if (row.replyAgeMs > STALL_MS) return undefined;
  return row;
}

/** A standby that has not replied for this long is as good as gone. */
export const STALL_MS = 10_000n;

/** A standby name as synchronous_standby_names needs it (double-quoted unless a-z, 0-9, _). */
const quoted = (name: string): string => (/^[a-z0-9_]+$/.test(name) ? name : `"${name}"`);

export function desiredNames(
  node: Node,
  durability: DurabilityText,
  adding: Adding | undefined,
): string {
  const set = node.replicas.filter((r) => r.state === ReplicaState.SYNC).map((r) => r.name);
  if (adding && !set.includes(adding.name)) set.push(adding.name);
  if (set.length > 0) return `FIRST ${set.length} (${set.map(quoted).join(', ')})`;
  // Required: with no synchronous replica, commits wait until any replica is back.
  const all = node.replicas.map((r) => r.name);
  if (durability === 'required' && all.length > 0) return `FIRST 1 (${all.map(quoted).join(', ')})`;
  return '';
}

export function planSync(input: SyncInput): SyncStep {
  const { node, primary, durability, adding } = input;
  const sync = node.replicas.filter((r) => r.state === ReplicaState.SYNC);
  const lost = sync.filter(
    (r) => (input.notStreamingMs.get(r.name) ?? 0) >= input.graceMs && !streaming(primary, r.name),
  );
  if (lost.length > 0) {
    const names = lost.map((r) => r.name).join(', ');
    if (durability === 'preferred') {
      return {
        kind: 'record',
        states: lost.map((replica) => ({ replica, state: 'catching_up' })),
        ...(lost.length === sync.length
          ? {
              degraded: {
                on: true,
                reason: `synchronous replica ${names} stopped streaming; the primary commits alone (durability preferred) and is not failed over until a replica is synchronous again`,
              },
            }
          : {}),
        reason: `${names} stopped streaming; it leaves the sync set before synchronous_standby_names`,
      };
    }
    if (!node.degraded)
      return {
        kind: 'record',
        states: [],
        degraded: {
          on: true,
          reason: `synchronous replica ${names} stopped streaming; commits wait for it (durability required)`,
        },
        reason: `${names} stopped streaming`,
      };
  }

  const current = adding;
  if (current) {
    const r = node.replicas.find((x) => x.name === current!.name);
    if (!r || r.state !== ReplicaState.CATCHING_UP || !streaming(primary, r.name))
      return {
        kind: 'adding',
        adding: undefined,
        reason: `${current.name} stopped streaming while joining`,
      };
  }

  const want = desiredNames(node, durability, current);
  if (primary.synchronousStandbyNames.trim() !== want)
    return { kind: 'names', value: want, reason: 'synchronous_standby_names follows the sync set' };

  if (current) {
    const r = node.replicas.find((x) => x.name === current!.name)!;
    if (current.lsn0 === undefined) {
      const lsn0 = lsnValue(primary.lsn);
      if (lsn0 < 0n) return { kind: 'none' };
      return { kind: 'adding', adding: { ...current, lsn0 }, reason: `${r.name} is named` };
    }
    const row = streaming(primary, r.name);
    if (row && row.syncState === 'sync' && lsnValue(row.flushLsn) >= current.lsn0) {
      const stillLost = sync.some((s) => !streaming(primary, s.name));
      return {
        kind: 'record',
        states: [{ replica: r, state: 'sync' }],
        ...(node.degraded && !stillLost ? { degraded: { on: false, reason: '' } } : {}),
        reason: `${r.name} streams synchronously with every earlier commit flushed`,
      };
    }
    return { kind: 'none' };
  }

  if (node.degraded && sync.length > 0 && sync.every((s) => streaming(primary, s.name)))
    return {
      kind: 'record',
      states: [],
      degraded: { on: false, reason: '' },
      reason: 'every synchronous replica streams again',
    };

  if (node.failingOver) return { kind: 'none' };
  const candidate = node.replicas.find((r) => {
    if (r.state !== ReplicaState.CATCHING_UP) return false;
    const row = streaming(primary, r.name);
    return row !== undefined && row.flushLagBytes >= 0n && row.flushLagBytes <= input.catchUpBytes;
  });
  if (candidate)
    return {
      kind: 'adding',
      adding: { name: candidate.name },
      reason: `${candidate.name} streams and has caught up; it joins the sync set`,
    };
  return { kind: 'none' };
}
