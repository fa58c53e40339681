// Builders for the pure deciders' tests (not exported from index.ts).
import {
  create,
  AgentReportSchema,
  HaMode,
  NodeRole,
  NodeSchema,
  NodeState,
  ReplicaState,
  type AgentReport,
  type MessageInitShape,
  type Node,
} from '@tessera/proto';
import type { NodeView, Seen } from './facts.js';

export const P = { host: '10.0.0.1', port: 5432 };
export const R = { host: '10.0.0.2', port: 5432, name: 'd1_r' };

export function node(over: MessageInitShape<typeof NodeSchema> = {}): Node {
  return create(NodeSchema, {
    name: 'd1',
    ...P,
    role: NodeRole.DATA,
    state: NodeState.ACTIVE,
    haMode: HaMode.NATIVE,
    replicas: [{ ...R, state: ReplicaState.SYNC }],
    ...over,
  });
}

export function report(over: MessageInitShape<typeof AgentReportSchema> = {}): AgentReport {
  return create(AgentReportSchema, { node: 'd1', reachable: true, mode: 'native', ...over });
}

export const primaryReport = (over: MessageInitShape<typeof AgentReportSchema> = {}) =>
  report({
    address: '10.0.0.1:5432',
    lsn: '0/3000000',
    synchronousStandbyNames: 'FIRST 1 (d1_r)',
    ...over,
  });
export const standbyReport = (over: MessageInitShape<typeof AgentReportSchema> = {}) =>
  report({
    address: '10.0.0.2:5432',
    inRecovery: true,
    replica: true,
    receivedLsn: '0/3000000',
    ...over,
  });

export function view(
  n: Node,
  primary: AgentReport | undefined,
  replicas: AgentReport[] = [],
  ageMs = 100,
): NodeView {
  const seen = (r: AgentReport): Seen => ({ report: r, ageMs });
  return {
    node: n,
    primary: primary && seen(primary),
    replicas: new Map(replicas.map((r) => [r.address, seen(r)])),
    freshMs: 3_000,
  };
}
