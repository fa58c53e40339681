// The mover's Prometheus metrics: what it copies, how far behind a move is, how long each phase
// and each cutover's write pause take, and the jobs it runs.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export interface MoverMetrics {
  rowsCopied: Counter<'keyspace'>;
  bytesCopied: Counter<'keyspace'>;
  lagBytes: Gauge<'job'>;
  markerRoundTrip: Histogram;
  phaseSeconds: Histogram<'kind' | 'phase'>;
  /** Freeze to release of each cutover: how long writes of the range were held. */
  pauseSeconds: Histogram;
  cutovers: Counter<'outcome'>;
  jobsRunning: Gauge;
  jobsFinished: Counter<'kind' | 'state'>;
  rowsDeleted: Counter<'keyspace'>;
  verifiedRows: Counter<'keyspace'>;
}

export function moverMetrics(registry: Registry): MoverMetrics {
  const r = [registry];
  return {
    rowsCopied: new Counter({
      name: 'tessera_mover_rows_copied_total',
      help: 'Rows of moved ranges copied to their new owner (initial copy).',
      labelNames: ['keyspace'],
      registers: r,
    }),
    bytesCopied: new Counter({
      name: 'tessera_mover_bytes_copied_total',
      help: 'Bytes of moved ranges copied to their new owner (initial copy, as COPY counts them).',
      labelNames: ['keyspace'],
      registers: r,
    }),
    lagBytes: new Gauge({
      name: 'tessera_mover_lag_bytes',
      help: "WAL between the source's current position and what the move's subscription confirmed.",
      labelNames: ['job'],
      registers: r,
    }),
    markerRoundTrip: new Histogram({
      name: 'tessera_mover_marker_round_trip_seconds',
      help: 'A marker written on the source until the target has it.',
      buckets: [0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 1, 5],
      registers: r,
    }),
    phaseSeconds: new Histogram({
      name: 'tessera_mover_phase_seconds',
      help: 'How long each phase of a job took.',
      labelNames: ['kind', 'phase'],
      buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 30, 120, 600, 3600],
      registers: r,
    }),
    pauseSeconds: new Histogram({
      name: 'tessera_mover_cutover_pause_seconds',
      help: 'Freeze to release of a cutover: how long writes of the moving range were held.',
      buckets: [0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2, 5],
      registers: r,
    }),
    cutovers: new Counter({
      name: 'tessera_mover_cutovers_total',
      help: 'Cutovers by outcome: flipped, or aborted (and retried) before the flip.',
      labelNames: ['outcome'],
      registers: r,
    }),
    jobsRunning: new Gauge({
      name: 'tessera_mover_jobs_running',
      help: 'Jobs this mover runs now.',
      registers: r,
    }),
    jobsFinished: new Counter({
      name: 'tessera_mover_jobs_finished_total',
      help: 'Jobs this mover finished, by kind and final state.',
      labelNames: ['kind', 'state'],
      registers: r,
    }),
    rowsDeleted: new Counter({
      name: 'tessera_mover_rows_deleted_total',
      help: 'Rows of moved ranges deleted from their old owner.',
      labelNames: ['keyspace'],
      registers: r,
    }),
    verifiedRows: new Counter({
      name: 'tessera_mover_verified_rows_total',
      help: 'Rows compared by move verification.',
      labelNames: ['keyspace'],
      registers: r,
    }),
  };
}
