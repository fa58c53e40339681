// Jobs as people and tools read them: lower-case states, the steps with their progress, the
// parsed spec and result; the progress of a running job (phase, rows copied of total, lag, rate,
// ETA) as one line for a terminal's progress bar or one JSON object for a pipe.
import { JobState, type Job } from '@tessera/proto';
import { assertNever, textTable } from '../format.js';

export function jobStateName(s: JobState): string {
  switch (s) {
    case JobState.PENDING:
      return 'pending';
    case JobState.RUNNING:
      return 'running';
    case JobState.DONE:
      return 'done';
    case JobState.FAILED:
      return 'failed';
    case JobState.CANCELLED:
      return 'cancelled';
    case JobState.CANCELLING:
      return 'cancelling';
    case JobState.VERIFY_FAILED:
      return 'verify_failed';
    case JobState.UNSPECIFIED:
      return 'unspecified';
    default:
      return assertNever(s);
  }
}

export const isFinished = (s: JobState): boolean =>
  s === JobState.DONE ||
  s === JobState.FAILED ||
  s === JobState.CANCELLED ||
  s === JobState.VERIFY_FAILED;

const parse = (text: string): unknown => {
  if (text === '') return {};
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
};

export interface JobView {
  id: bigint;
  kind: string;
  state: string;
  phase: string;
  spec: unknown;
  error: string;
  mover: string;
  parentId: bigint | null;
  committed: boolean;
  takeovers: number;
  createdMs: bigint;
  updatedMs: bigint;
  leaseUntilMs: bigint;
  steps: { index: number; name: string; state: string; progress: unknown }[];
  result: unknown;
}

export function jobView(j: Job): JobView {
  return {
    id: j.id,
    kind: j.kind,
    state: jobStateName(j.state),
    phase: j.phase,
    spec: parse(j.specJson),
    error: j.error,
    mover: j.claimedBy,
    parentId: j.parentId === 0n ? null : j.parentId,
    committed: j.committed,
    takeovers: j.takeovers,
    createdMs: j.createdMs,
    updatedMs: j.updatedMs,
    leaseUntilMs: j.leaseUntilMs,
    steps: j.steps.map((s) => ({
      index: s.index,
      name: s.name,
      state: jobStateName(s.state),
      progress: parse(s.progressJson),
    })),
    result: parse(j.resultJson),
  };
}

/** What a job is about, in a few words ("accounts:-9223372036854775808 -> data2"). */
export function jobTarget(j: Job): string {
  const s = parse(j.specJson) as Record<string, unknown>;
  switch (j.kind) {
    case 'move':
      return `${s['keyspace']}:${s['lo']} -> ${s['to']}${s['planOnly'] ? ' (plan)' : ''}`;
    case 'split':
      return `${s['keyspace']}:${s['lo']} at ${s['at'] ?? 'midpoint'}${s['moveTo'] ? ` -> ${s['moveTo']}` : ''}`;
    case 'merge':
      return `${s['keyspace']}:${s['lo']} + ${s['keyspace']}:${s['lo2']}`;
    case 'verify':
      return `${s['keyspace']}${s['lo'] === undefined ? '' : `:${s['lo']}`}`;
    case 'drain':
      return `${s['node']}`;
    case 'node-add':
      return `${s['name']} ${s['host']}:${s['port']}`;
    case 'rebalance':
      return s['planOnly'] ? '(plan)' : '';
    default:
      return '';
  }
}

export function jobsTable(jobs: readonly Job[]): string {
  if (jobs.length === 0) return '(no jobs)\n';
  return textTable(
    ['id', 'kind', 'state', 'phase', 'what', 'mover', 'error'],
    jobs.map((j) => [
      j.id.toString(),
      j.kind,
      jobStateName(j.state),
      j.phase || '-',
      jobTarget(j) || '-',
      j.claimedBy || '-',
      j.error.length > 60 ? `${j.error.slice(0, 57)}...` : j.error || '-',
    ]),
  );
}

export function jobText(j: Job): string {
  const v = jobView(j);
  const lines = [
    `job ${v.id} (${v.kind}${jobTarget(j) ? `: ${jobTarget(j)}` : ''})`,
    `state:   ${v.state}${v.phase ? ` (phase ${v.phase})` : ''}${v.committed ? ', past its point of no return' : ''}`,
    `mover:   ${v.mover || '-'}${v.takeovers > 0 ? ` (taken over ${v.takeovers} time(s))` : ''}`,
    ...(v.parentId !== null ? [`parent:  job ${v.parentId}`] : []),
    ...(v.error ? [`error:   ${v.error}`] : []),
    '',
    textTable(
      ['step', 'state', 'progress'],
      v.steps.map((s) => [s.name, s.state, summary(s.progress)]),
    ).trimEnd(),
  ];
  const result = v.result as Record<string, unknown>;
  if (result && typeof result === 'object' && Object.keys(result).length > 0)
    lines.push('', `result:  ${JSON.stringify(result)}`);
  return `${lines.join('\n')}\n`;
}

function summary(progress: unknown): string {
  if (!progress || typeof progress !== 'object') return '';
  const p = { ...(progress as Record<string, unknown>) };
  delete p['plan'];
  const text = JSON.stringify(p);
  return text === '{}' ? '' : text.length > 100 ? `${text.slice(0, 97)}...` : text;
}

export interface Progress {
  id: string;
  kind: string;
  state: string;
  phase: string;
  rows: number | null;
  totalRows: number | null;
  lagBytes: number | null;
  rowsPerSec: number | null;
  etaSeconds: number | null;
}

/** The progress of a running job, from its steps (and the step of a child it waits for). */
export function progressOf(
  j: Job,
  prev: { rows: number; atMs: number } | undefined,
  nowMs: number,
): Progress {
  const step = (name: string) =>
    parse(j.steps.find((s) => s.name === name)?.progressJson ?? '') as Record<string, unknown>;
  const copy = step('copy');
  const sync = step('sync');
  const rows = typeof copy['rows'] === 'number' ? copy['rows'] : null;
  const totalRows = typeof copy['totalRows'] === 'number' ? copy['totalRows'] : null;
  let rowsPerSec: number | null =
    typeof copy['rowsPerSec'] === 'number' ? copy['rowsPerSec'] : null;
  if (rows !== null && prev && nowMs > prev.atMs && rows > prev.rows)
    rowsPerSec = Math.round(((rows - prev.rows) * 1000) / (nowMs - prev.atMs));
  const etaSeconds =
    rows !== null && totalRows !== null && rowsPerSec && rowsPerSec > 0 && rows < totalRows
      ? Math.round((totalRows - rows) / rowsPerSec)
      : null;
  return {
    id: j.id.toString(),
    kind: j.kind,
    state: jobStateName(j.state),
    phase: j.phase,
    rows,
    totalRows,
    lagBytes: typeof sync['lagBytes'] === 'number' ? sync['lagBytes'] : null,
    rowsPerSec,
    etaSeconds,
  };
}

const WIDTH = 24;

/** One terminal line: a bar, the phase, rows of total, lag, rate, ETA. */
export function progressLine(p: Progress): string {
  const fraction =
    p.rows !== null && p.totalRows ? Math.min(1, p.rows / p.totalRows) : p.state === 'done' ? 1 : 0;
  const filled = Math.round(fraction * WIDTH);
  const parts = [
    `[${'#'.repeat(filled)}${'-'.repeat(WIDTH - filled)}]`,
    `job ${p.id} ${p.kind}`,
    p.phase || p.state,
  ];
  if (p.rows !== null)
    parts.push(
      `${p.rows.toLocaleString('en-US')}/${(p.totalRows ?? 0).toLocaleString('en-US')} rows`,
    );
  if (p.lagBytes !== null) parts.push(`lag ${p.lagBytes} B`);
  if (p.rowsPerSec !== null) parts.push(`${p.rowsPerSec.toLocaleString('en-US')} rows/s`);
  if (p.etaSeconds !== null) parts.push(`ETA ${p.etaSeconds}s`);
  return parts.join('  ');
}
