// What every client session shares: configuration, the current catalog, pools, the analysis
// cache, metrics, logger and the cancel registry. One object, passed in, no globals.
import type { SecureContext } from 'node:tls';
import type { Logger } from '@tessera/telemetry';
import type { AnalysisCache } from '@tessera/sql';
import type { RouterConfig } from './config.js';
import type { Snapshot } from '@tessera/keyspace';
import type { Epoch } from './catalog/epochs.js';
import type { RouterLease } from './catalog/lease.js';
import type { Pools } from './pool/pools.js';
import type { RouterMetrics } from './metrics.js';
import type { CancelRegistry } from './cancel.js';
import type { RoleSecrets } from './session/auth-verifiers.js';
import type { DecisionLog } from '@tessera/twopc';
import type { Sequences } from './sequences/sequences.js';
import type { DdlWatch } from './session/ddl-watch.js';

export interface RouterServices {
  readonly config: RouterConfig;
  /** The current snapshot; undefined until a valid catalog arrived. */
  catalog(): Snapshot | undefined;
  /** The current epoch (its snapshot and running count), read once per statement. */
  epoch(): Epoch | undefined;
  /**
   * The first epoch after `after`, for a held statement; undefined after `timeoutMs` or once
   * cancelled (a CancelRequest).
   */
  nextEpoch(
    after: bigint,
    timeoutMs: number,
  ): { readonly epoch: Promise<Epoch | undefined>; cancel(): void };
  /** This router's lease with the coordinator (statements on nodes wait while it is lapsed). */
  readonly lease: RouterLease;
  readonly pools: Pools;
  readonly cache: AnalysisCache;
  readonly metrics: RouterMetrics;
  readonly log: Logger;
  readonly cancels: CancelRegistry;
  /** This router's identity with the coordinator; it starts every 2PC transaction id. */
  readonly routerId: string;
  /** The coordinator's 2PC decision log (TxnService.Decide), for commits across nodes. */
  readonly decisions: DecisionLog;
  /** TLS offered to clients (SSLRequest answered 'S'); undefined = answered 'N'. */
  readonly tls?: SecureContext | undefined;
  /** Cluster-wide sequences (sequences/defaults.ts); undefined: the nodes' own sequences are used. */
  readonly sequences?: Sequences | undefined;
  /** Role verifiers for `--auth scram`. */
  readonly roleSecrets?: RoleSecrets | undefined;
  /** Home's DDL notifications, per database in use (session/names.ts reads names again). */
  readonly ddlWatch?: DdlWatch | undefined;
}
