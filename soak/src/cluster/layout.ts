// Which members a plan's cluster has (docs/soak.md, "The cluster and the network"), by name, and
// whether they run in network namespaces or on loopback. Pure, but for asking the machine
// whether it can make namespaces.
import { netnsSupport } from '../net/netns.js';
import type { MemberSpec } from '../net/topology.js';
import type { ClusterPlan, NetworkMode } from '../plan/plan.js';
import { replicaMember } from './nodes.js';

export type NetworkUse = 'netns' | 'loopback';

/** Decides netns or loopback for a plan: what it asks for, what the machine can do. */
export function networkFor(mode: NetworkMode): { use: NetworkUse; reason: string } {
  if (mode === 'loopback') return { use: 'loopback', reason: 'the plan asks for loopback' };
  const s = netnsSupport();
  if (s.ok) return { use: 'netns', reason: 'each instance in its own network namespace' };
  if (mode === 'netns') throw new Error(`the plan needs network namespaces, but ${s.reason}`);
  return {
    use: 'loopback',
    reason: `${s.reason}: running on 127.0.0.1, without partition faults`,
  };
}

/** Node names: home, data1..N. */
export function nodeNames(plan: Pick<ClusterPlan, 'dataNodes'>): string[] {
  return ['home', ...Array.from({ length: plan.dataNodes }, (_, i) => `data${i + 1}`)];
}

/**
 * Member names: home, data1..N, their replicas when the plan has them (homerep, data1rep, ...;
 * named by the role they start in: after a failover data1rep is data1's primary), coord0..,
 * router0.., mover0...
 */
export function memberSpecs(
  plan: Pick<ClusterPlan, 'dataNodes' | 'replicas' | 'coordinators' | 'routers' | 'movers'>,
): MemberSpec[] {
  const nodes = nodeNames(plan);
  const seq = (n: number, prefix: string, kind: MemberSpec['kind']): MemberSpec[] =>
    Array.from({ length: n }, (_, i) => ({ name: `${prefix}${i}`, kind }));
  const replicas = plan.replicas > 0 ? nodes.map(replicaMember) : [];
  return [
    ...[...nodes, ...replicas].map((name) => ({ name, kind: 'node' as const })),
    ...seq(plan.coordinators, 'coord', 'coordinator'),
    ...seq(plan.routers, 'router', 'router'),
    ...seq(plan.movers, 'mover', 'mover'),
  ];
}
