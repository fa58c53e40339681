// A replicated node followed through the catalog, as an operator follows it with `tessera
// status`: waiting until its replica is synchronous again, until a failover has completed, and
// bringing an instance back the way docs/operations.md says it must come back. A former primary
// is fenced by its agent and returns only through `tessera nodes rejoin` (RejoinNode), as a
// replica of the new primary; a replica that is down is started again.
import { setTimeout as sleep } from 'node:timers/promises';
import { ReplicaState, type Node, type Replica } from '@tessera/proto';
import type { Cluster } from './cluster.js';
import type { PgInstance } from './instance.js';
import type { NodeMember } from './nodes.js';

/** Not failing over, not degraded, and a replica in the durable sync set: it can fail over. */
export function canFailOver(n: Pick<Node, 'failingOver' | 'degraded' | 'replicas'>): boolean {
  return !n.failingOver && !n.degraded && n.replicas.some((r) => r.state === ReplicaState.SYNC);
}

const addressOf = (x: { host: string; port: number }): string => `${x.host}:${x.port}`;

/** The catalog's record of instance `i` as a replica of its node (undefined: it is the primary). */
export function replicaRecord(n: Pick<Node, 'replicas'>, i: PgInstance): Replica | undefined {
  return n.replicas.find((r) => addressOf(r) === i.catalogKey);
}

/**
 * Polls the catalog (through the VIP; errors, e.g. while the home node fails over, are waited
 * out) until node `name` satisfies `pred`; the cluster follows every catalog it reads.
 */
export async function waitNode(
  cluster: Cluster,
  name: string,
  pred: (n: Node) => boolean,
  timeoutMs: number,
  what: string,
): Promise<Node> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no catalog read yet';
  for (;;) {
    try {
      const c = await cluster.getCatalog();
      cluster.followCatalog(c);
      const n = c.nodes.find((x) => x.name === name);
      if (n && pred(n)) return n;
      last = n ? describe(n) : `no node ${name}`;
    } catch (e) {
      last = (e as Error).message;
    }
    if (Date.now() > deadline)
      throw new Error(`${name}: no ${what} after ${timeoutMs / 1000} s (last: ${last})`);
    await sleep(250);
  }
}

/** One line of what the catalog says of a node's replication. */
export function describe(n: Node): string {
  const replicas = n.replicas.map((r) => `${addressOf(r)} ${ReplicaState[r.state]}`).join(', ');
  return `primary ${addressOf(n)}${n.failingOver ? ' (failing over)' : ''}${n.degraded ? ` degraded (${n.degradedReason})` : ''}; replicas ${replicas || 'none'}`;
}

/** Waits until every replicated node can fail over (setup, and before a failover fault). */
export async function waitReplicated(
  cluster: Cluster,
  nodes: readonly NodeMember[],
  timeoutMs: number,
): Promise<void> {
  for (const n of nodes.filter((x) => x.replicated))
    await waitNode(cluster, n.name, canFailOver, timeoutMs, 'synchronous replica');
}

const RESTORE_TIMEOUT_MS = 180_000;
/** How long a restored node must stay healthy before it counts as restored (see restoreNode). */
const STABLE_MS = 15_000;

/**
 * Brings every instance of node `n` back after a fault, whatever the fault led to, and resolves
 * once the node can fail over again. Once no failover is under way: a primary that is down is
 * started; a former primary (FENCED) is rejoined (RejoinNode: its agent runs pg_rewind, or takes
 * a fresh pg_basebackup when rewinding fails, and starts it as a standby of the new primary); a
 * replica that is down is started (its agent usually has done so already). Resolves with what
 * was done, by member, once the node has stayed so for STABLE_MS.
 */
export async function restoreNode(
  cluster: Cluster,
  n: NodeMember,
): Promise<Record<string, unknown>> {
  const deadline = Date.now() + RESTORE_TIMEOUT_MS;
  const started = new Map<PgInstance, number>();
  const rejoinAsked = new Map<PgInstance, number>();
  let healthySince: number | undefined;
  for (;;) {
    const left = Math.max(1_000, deadline - Date.now());
    const node = await waitNode(cluster, n.name, (x) => !x.failingOver, left, 'completed failover');
    const now = Date.now();
    for (const i of n.instances) {
      const record = replicaRecord(node, i);
      if (record === undefined || isStandby(record)) {
        if (i.postmasterPid === undefined && now > (started.get(i) ?? 0) + 5_000) {
          started.set(i, now);
          await i.start().catch(() => undefined);
        }
      } else if (record.state === ReplicaState.FENCED && now > (rejoinAsked.get(i) ?? 0) + 60_000) {
        // Asked again only if a minute later it is still fenced (the directive failed).
        rejoinAsked.set(i, now);
        await cluster.admin
          .rejoinNode({ name: n.name, host: record.host, port: record.port })
          .catch(() => rejoinAsked.delete(i));
      }
    }
    const down = n.instances.filter((i) => i.postmasterPid === undefined).map((i) => i.member);
    // Healthy for a while, not just now: a primary back within its outage can still be failed
    // over by the coordinator seconds later (it decides on reports from the outage), and its
    // fenced former primary must then be rejoined here, or the node has no replica left.
    if (down.length === 0 && canFailOver(node)) {
      healthySince ??= now;
      if (now - healthySince >= STABLE_MS) break;
    } else healthySince = undefined;
    if (Date.now() > deadline)
      throw new Error(
        `${n.name} is not back within ${RESTORE_TIMEOUT_MS / 1000} s (${describe(node)}; down: ${down.join(', ') || 'none'})`,
      );
    await sleep(500);
  }
  const done: Record<string, unknown> = { primary: n.primary.member };
  for (const i of started.keys()) done[i.member] = 'started';
  for (const i of rejoinAsked.keys())
    done[i.member] =
      `rejoined (${String(i.agent?.lastLog('rejoined as a standby')?.how ?? 'how unknown')})`;
  return done;
}

const isStandby = (r: Replica): boolean =>
  r.state === ReplicaState.CATCHING_UP || r.state === ReplicaState.SYNC;
