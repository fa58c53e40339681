// The router's Prometheus series: client connections, statements by route kind, backend pool use
// and errors by SQLSTATE, on the service registry from @tessera/telemetry.
import { Counter, Gauge, Histogram } from 'prom-client';
import type { Registry } from '@tessera/telemetry';
import type { AcquireStats } from './pool/pool.js';
import type { RouteLabel } from './routing/route-types.js';

export interface RouterMetrics {
  clientConnections: Gauge;
  statements(route: RouteLabel): void;
  error(sqlstate: string): void;
  /** A read across nodes finished: rows the nodes sent to the router for merging. */
  rowsMerged(rows: number): void;
  /** A transaction that wrote on several nodes ended its two-phase commit with `outcome`. */
  twoPhase(outcome: TwoPhaseOutcome): void;
  /** A read ran on a backend shared with other clients' reads (execute/acquire.ts: lane). */
  pipelined(): void;
  /** A statement was held (`reason`: range, node, lease) for `seconds`. */
  held(reason: 'range' | 'node' | 'lease', seconds: number): void;
  /** An epoch was acknowledged at its drain deadline, older statements still running. */
  drainDeadline(): void;
  /** A lease renewal with the coordinator was granted, or failed. */
  leaseRenewal(granted: boolean): void;
  /** A session started (+1) or stopped (-1) keeping a backend for its session state (session/pins.ts). */
  pinnedSessions(delta: 1 | -1): void;
  /** A statement left session state of `kind` on its backend. */
  pinned(kind: string): void;
  /** A router announced DDL it committed, through home (session/ddl-watch.ts). */
  ddlNotified(): void;
}

/** committed; prepare_failed (a node's error, rolled back); in_doubt (08007); aborted (40001). */
/** `unfinished`: committed, but a node did not confirm COMMIT PREPARED in time (08007). */
export type TwoPhaseOutcome =
  'committed' | 'prepare_failed' | 'in_doubt' | 'aborted' | 'unfinished';

export function routerMetrics(
  registry: Registry,
  poolUsage: () => Map<string, { idle: number; busy: number }>,
  leaseLeftMs: () => number = () => 0,
  acquireStats: () => ReadonlyMap<string, Readonly<AcquireStats>> = () => new Map(),
): RouterMetrics {
  const clientConnections = new Gauge({
    name: 'tessera_router_client_connections',
    help: 'Client connections open now',
    registers: [registry],
  });
  const statements = tally(
    registry,
    'tessera_router_statements_total',
    'Statements routed, by route kind (single node, home node, all nodes, scatter, refused)',
    'route',
  );
  const errors = tally(
    registry,
    'tessera_router_errors_total',
    'Errors sent to clients, by SQLSTATE',
    'sqlstate',
  );
  new Gauge({
    name: 'tessera_router_pool_backends',
    help: 'Backend connections per node, idle or busy',
    labelNames: ['node', 'state'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [node, u] of poolUsage()) {
        this.set({ node, state: 'idle' }, u.idle);
        this.set({ node, state: 'busy' }, u.busy);
      }
    },
  });
  poolCounter(
    registry,
    'tessera_router_pool_acquire_waits_total',
    'Statements that found every backend of their pool busy and waited, by node',
    () => acquireStats(),
    'waits',
  );
  poolCounter(
    registry,
    'tessera_router_pool_acquire_timeouts_total',
    'Waits for a busy pool that ended in 53300 (--acquire-timeout-ms, --held-acquire-timeout-ms), by node',
    () => acquireStats(),
    'timeouts',
  );
  poolCounter(
    registry,
    'tessera_router_pool_acquire_abandoned_total',
    'Waits for a busy pool ended because the client went away, by node',
    () => acquireStats(),
    'abandoned',
  );
  const merged = new Histogram({
    name: 'tessera_router_scatter_rows_merged',
    help: 'Rows the nodes sent to the router per read across nodes',
    buckets: [0, 10, 100, 1_000, 10_000, 100_000, 1_000_000],
    registers: [registry],
  });
  const twoPhase = new Counter({
    name: 'tessera_router_2pc_total',
    help: 'Two-phase commits of transactions that wrote on several nodes, by outcome',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const pipelined = new Counter({
    name: 'tessera_router_pipelined_statements_total',
    help: "Reads sent pipelined on a backend other clients' reads were using",
    registers: [registry],
  });
  const heldTotal = new Counter({
    name: 'tessera_router_held_statements_total',
    help: 'Statements held for a later catalog epoch (a frozen range, a node failing over) or a lapsed router lease, by reason',
    labelNames: ['reason'],
    registers: [registry],
  });
  const holdSeconds = new Histogram({
    name: 'tessera_router_hold_seconds',
    help: 'How long held statements waited for a later catalog epoch or a renewed lease',
    buckets: [0.01, 0.05, 0.1, 0.5, 1, 2, 5, 15, 60],
    registers: [registry],
  });
  const leaseRenewals = new Counter({
    name: 'tessera_router_lease_renewals_total',
    help: 'Router lease renewals with the coordinator, by outcome (granted, failed)',
    labelNames: ['outcome'],
    registers: [registry],
  });
  new Gauge({
    name: 'tessera_router_lease_remaining_seconds',
    help: "Seconds left of this router's lease with the coordinator (0: lapsed; statements on nodes wait)",
    registers: [registry],
    collect() {
      this.set(leaseLeftMs() / 1000);
    },
  });
  const drain = new Counter({
    name: 'tessera_router_drain_deadline_total',
    help: 'Epochs acknowledged at their drain deadline while statements of an older epoch still ran',
    registers: [registry],
  });
  const pinnedSessions = new Gauge({
    name: 'tessera_router_pinned_sessions',
    help: 'Client sessions keeping backends for state that cannot be pooled (temporary tables, session advisory locks, WITH HOLD cursors, LISTEN)',
    registers: [registry],
  });
  const pins = tally(
    registry,
    'tessera_router_pins_total',
    'Statements that left session state on their backend, keeping it for the client, by kind',
    'reason',
  );
  const ddlNotices = new Counter({
    name: 'tessera_router_ddl_notifications_total',
    help: 'DDL announcements received from home (a router, maybe this one, committed DDL): each makes every session read its table names again before its next statement',
    registers: [registry],
  });
  return {
    clientConnections,
    ddlNotified: () => ddlNotices.inc(),
    pinnedSessions: (delta) => pinnedSessions.inc(delta),
    pinned: pins,
    held: (reason, seconds) => {
      heldTotal.inc({ reason });
      holdSeconds.observe(seconds);
    },
    drainDeadline: () => drain.inc(),
    leaseRenewal: (granted) => leaseRenewals.inc({ outcome: granted ? 'granted' : 'failed' }),
    pipelined: () => pipelined.inc(),
    twoPhase: (outcome) => twoPhase.inc({ outcome }),
    rowsMerged: (rows) => merged.observe(rows),
    statements,
    error: errors,
  };
}

/** A per-node counter read from the pools' own counts at scrape time. */
function poolCounter(
  registry: Registry,
  name: string,
  help: string,
  stats: () => ReadonlyMap<string, Readonly<AcquireStats>>,
  field: keyof AcquireStats,
): void {
  new Counter({
    name,
    help,
    labelNames: ['node'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [node, st] of stats()) this.inc({ node }, st[field]);
    },
  });
}

/**
 * A one-label counter counted in a plain map and handed to prom-client at scrape time: a labelled
 * inc() hashes its label object every time, which costs more than routing the statement.
 */
function tally(
  registry: Registry,
  name: string,
  help: string,
  label: string,
): (value: string) => void {
  const counts = new Map<string, number>();
  new Counter({
    name,
    help,
    labelNames: [label],
    registers: [registry],
    collect() {
      this.reset();
      for (const [value, n] of counts) this.inc({ [label]: value }, n);
    },
  });
  return (value) => counts.set(value, (counts.get(value) ?? 0) + 1);
}
