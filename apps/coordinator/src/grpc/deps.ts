// What the gRPC services need from the coordinator: the stores of the current term as the
// active coordinator (gone while standing by), the watch hub, the logger, and the agent reports.
import type { Logger } from '@tessera/telemetry';
import type { AgentReports } from '../agent-reports.js';
import type { FailoverEngine } from '../failover/engine.js';
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

export interface ServiceDeps {
  readonly log: Logger;
  readonly hub: WatchHub;
  readonly agents: AgentReports;
  /** The current term; throws CatalogError UNAVAILABLE while standing by. */
  term(): ActiveTerm;
  /** Called after every committed catalog change with its epoch. */
  onEpoch(epoch: bigint): void;
  readonly engine: FailoverEngine;
  /** This coordinator's advertised address. */
  self(): string;
  isActive(): boolean;
  /** While standing by: the active coordinator's address, if the catalog names one. */
  activeAddress(): string | undefined;
}
