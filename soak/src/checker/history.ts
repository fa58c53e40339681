// The history a soak run writes (docs/soak.md, "History"): one JSON object per line, Jepsen-shaped.
// Client processes are integers and pair an `invoke` with one completion; the nemesis, the setup
// and the final-state probe write standalone `info` events under a string process name.

export type EventType = 'invoke' | 'ok' | 'fail' | 'info';
export type ProcessId = number | string;

export interface HistoryEvent {
  /** 0, 1, 2, ... in file order. */
  index: number;
  /** Nanoseconds since the history began, from one monotonic clock. */
  time_ns: number;
  process: ProcessId;
  type: EventType;
  f: string;
  value: unknown;
}

/** A client operation: an invoke and what became of it. */
export interface Op {
  process: number;
  f: string;
  status: 'ok' | 'fail' | 'info';
  invokeNs: number;
  /** When the definite answer arrived; undefined for `info` (it may take effect any time after). */
  completeNs: number | undefined;
  /** The invoke's value. */
  invoke: unknown;
  /** The completion's value (an ok read carries what it read); the invoke's when none. */
  value: unknown;
  invokeIndex: number;
}

export interface ParsedHistory {
  events: HistoryEvent[];
  ops: Op[];
  /** Standalone events of non-client processes (nemesis, setup, probe), in order. */
  meta: HistoryEvent[];
  /** Broken rules of the format itself, one sentence each. */
  malformed: string[];
}

const TYPES: ReadonlySet<string> = new Set(['invoke', 'ok', 'fail', 'info']);

/** Parses JSON lines; a line that is not an event becomes a `malformed` entry, not an exception. */
export function parseHistoryText(text: string): { events: HistoryEvent[]; malformed: string[] } {
  const events: HistoryEvent[] = [];
  const malformed: string[] = [];
  text.split('\n').forEach((line, i) => {
    const e = parseHistoryLine(line, i + 1);
    if (typeof e === 'string') malformed.push(e);
    else if (e) events.push(e);
  });
  return { events, malformed };
}

/** One line: the event, undefined for a blank line, or what is wrong with it. */
export function parseHistoryLine(text: string, lineNo: number): HistoryEvent | string | undefined {
  const line = text.trim();
  if (line === '') return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch {
    return `line ${lineNo} is not JSON`;
  }
  const e = asEvent(raw);
  return typeof e === 'string' ? `line ${lineNo}: ${e}` : e;
}

function asEvent(raw: unknown): HistoryEvent | string {
  if (typeof raw !== 'object' || raw === null) return 'not an object';
  const r = raw as Record<string, unknown>;
  if (typeof r.index !== 'number') return 'index is not a number';
  if (typeof r.time_ns !== 'number') return 'time_ns is not a number';
  if (typeof r.process !== 'number' && typeof r.process !== 'string')
    return 'process is neither a number nor a string';
  if (typeof r.type !== 'string' || !TYPES.has(r.type)) return `type ${String(r.type)} is unknown`;
  if (typeof r.f !== 'string') return 'f is not a string';
  return {
    index: r.index,
    time_ns: r.time_ns,
    process: r.process,
    type: r.type as EventType,
    f: r.f,
    value: r.value ?? null,
  };
}

/**
 * Pairs each client invoke with its completion. Rules (Knossos): a process has at most one
 * operation outstanding; after an `info` its id is retired and never used again; an invoke with
 * no completion by the end of the history is `info`.
 */
export function pairOperations(events: readonly HistoryEvent[]): ParsedHistory {
  const ops: Op[] = [];
  const meta: HistoryEvent[] = [];
  const malformed: string[] = [];
  const open = new Map<number, { e: HistoryEvent }>();
  const retired = new Set<number>();
  let lastIndex = -1;
  let lastTime = -Infinity;
  for (const e of events) {
    if (e.index <= lastIndex)
      malformed.push(`event ${e.index} does not follow ${lastIndex} (indexes must increase)`);
    if (e.time_ns < lastTime)
      malformed.push(`event ${e.index} goes back in time (${e.time_ns} < ${lastTime})`);
    lastIndex = e.index;
    lastTime = Math.max(lastTime, e.time_ns);
    if (typeof e.process === 'string') {
      if (e.type !== 'info')
        malformed.push(`event ${e.index}: process "${e.process}" writes only info events`);
      meta.push(e);
      continue;
    }
    const p = e.process;
    if (e.type === 'invoke') {
      if (retired.has(p))
        malformed.push(`event ${e.index}: process ${p} invokes after an info retired it`);
      if (open.has(p))
        malformed.push(`event ${e.index}: process ${p} invokes with an operation outstanding`);
      open.set(p, { e });
      continue;
    }
    const inv = open.get(p);
    if (!inv) {
      malformed.push(`event ${e.index}: ${e.type} of process ${p} without an invoke`);
      continue;
    }
    if (inv.e.f !== e.f)
      malformed.push(`event ${e.index}: completion f "${e.f}" differs from invoke "${inv.e.f}"`);
    open.delete(p);
    if (e.type === 'info') retired.add(p);
    ops.push({
      process: p,
      f: inv.e.f,
      status: e.type,
      invokeNs: inv.e.time_ns,
      completeNs: e.type === 'info' ? undefined : e.time_ns,
      invoke: inv.e.value,
      value: e.type === 'ok' ? e.value : (e.value ?? inv.e.value),
      invokeIndex: inv.e.index,
    });
  }
  for (const { e } of open.values()) {
    ops.push({
      process: e.process as number,
      f: e.f,
      status: 'info',
      invokeNs: e.time_ns,
      completeNs: undefined,
      invoke: e.value,
      value: e.value,
      invokeIndex: e.index,
    });
  }
  ops.sort((a, b) => a.invokeIndex - b.invokeIndex);
  return { events: [...events], ops, meta, malformed };
}
