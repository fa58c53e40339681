// What the gRPC services need from the coordinator: the stores of the current term as the
// active coordinator (gone while standing by), the watch hub, the logger, and the agent reports.
import type { AgentReport, NodeHealth } from '@tessera/proto';
import type { Logger } from '@tessera/telemetry';
import type { AgentReports, DirectiveSink } from '../agent-reports.js';
import type { InDoubtResolver } from '../recovery/in-doubt.js';
import type { CatalogStore } from '../store/catalog-store.js';
import type { JobStore } from '../store/jobs.js';
import type { RouterLeases } from '../store/router-leases.js';
import type { RouterStore } from '../store/routers.js';
import type { SequenceBlocks } from '../store/sequence-blocks.js';
import type { TxnLog } from '../store/txn-log.js';
import type { WatchHub } from '../watch-hub.js';

/** Valid for one term as the active coordinator. */
export interface ActiveTerm {
  readonly store: CatalogStore;
  readonly jobs: JobStore;
  readonly routers: RouterStore;
  readonly leases: RouterLeases;
  readonly txns: TxnLog;
  readonly sequences: SequenceBlocks;
  readonly inDoubt: InDoubtResolver;
}

/**
 * What the services ask of the failover engine (failover/engine.ts implements it). Declared here,
 * not imported from the engine: the engine and its operations depend on these deps.
 */
export interface FailoverControl {
  /** Agent streams are served (active, or interim so the home node can fail over). */
  acceptsAgents(): boolean;
  /** A report arrived on `sink`. */
  onReport(report: AgentReport, sink: DirectiveSink): void;
  health(): NodeHealth[];
  /** Makes a fenced former primary (or a stuck replica) a replica of the current primary. */
  rejoin(node: string, host: string, port: number): Promise<bigint>;
}

export interface ServiceDeps {
  readonly log: Logger;
  readonly hub: WatchHub;
  readonly agents: AgentReports;
  /** The current term; throws CatalogError UNAVAILABLE while standing by. */
  term(): ActiveTerm;
  /** Called after every committed catalog change with its epoch. */
  onEpoch(epoch: bigint): void;
  readonly engine: FailoverControl;
  /** This coordinator's advertised address. */
  self(): string;
  isActive(): boolean;
  /** While standing by: the active coordinator's address, if the catalog names one. */
  activeAddress(): string | undefined;
}
