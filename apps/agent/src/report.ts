// The report an agent sends (pure): what its last probe saw, whether it answers now, its lease,
// the outcomes of directives since the last report, and the HA engine's view when it follows one.
import {
  create,
  AgentReportSchema,
  type AgentReport,
  type DirectiveResult,
  type HaView,
} from '@tessera/proto';
import type { AgentConfig } from './config.js';
import type { InstanceState } from './probe.js';

export interface ReportFacts {
  config: Pick<AgentConfig, 'node' | 'address' | 'mode' | 'instanceName'>;
  seq: bigint;
  reachable: boolean;
  last: InstanceState | undefined;
  lastError: string;
  fenced: boolean;
  leaseRemainingMs: number | undefined;
  stoppedByLease: boolean;
  results: DirectiveResult[];
  ha: HaView | undefined;
}

export function buildReport(f: ReportFacts): AgentReport {
  const s = f.last;
  const inRecovery = s?.inRecovery ?? false;
  const maxFlushLag = (s?.standbys ?? []).reduce(
    (m, r) => (r.flushLagBytes > m ? r.flushLagBytes : m),
    0n,
  );
  return create(AgentReportSchema, {
    node: f.config.node,
    replica: inRecovery,
    reachable: f.reachable,
    inRecovery,
    lsn: s ? (inRecovery ? s.receivedLsn : s.currentLsn) : '',
    replicationLagBytes: s ? (inRecovery ? s.applyLagBytes : maxFlushLag) : 0n,
    connections: s?.connections ?? 0,
    diskFreeBytes: s?.diskFreeBytes ?? -1n,
    atMs: BigInt(Date.now()),
    address: f.config.address,
    receivedLsn: s?.receivedLsn ?? '',
    replayedLsn: s?.replayedLsn ?? '',
    standbys: (s?.standbys ?? []).map((r) => ({
      applicationName: r.applicationName,
      clientAddr: r.clientAddr,
      state: r.state,
      syncState: r.syncState,
      sentLsn: r.sentLsn,
      flushLsn: r.flushLsn,
      replayLsn: r.replayLsn,
      flushLagBytes: r.flushLagBytes,
      replyAgeMs: r.replyAgeMs,
    })),
    slots: (s?.slots ?? []).map((r) => ({
      name: r.name,
      type: r.type,
      active: r.active,
      retainedWalBytes: r.retainedWalBytes,
    })),
    seq: f.seq,
    fenced: f.fenced,
    timeline: s?.timeline ?? 0n,
    synchronousStandbyNames: s?.synchronousStandbyNames ?? '',
    error: f.reachable ? '' : f.lastError,
    mode: f.config.mode,
    results: f.results,
    ...(f.ha ? { ha: f.ha } : {}),
    leaseRemainingMs: BigInt(Math.max(0, Math.round(f.leaseRemainingMs ?? 0))),
    stoppedByLease: f.stoppedByLease,
    instanceName: f.config.instanceName,
  });
}
