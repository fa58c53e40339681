// sessionStateOf(analysis): the session state a statement leaves on (or clears from) the backend
// it runs on and that cannot move to another backend: temporary objects, session advisory locks,
// WITH HOLD cursors, LISTEN. A router keeps such a backend for its client while the state lasts.
// Pure: read from the analysis only.
import type { Analysis } from './types.js';

export type SessionStateKind = 'temp_table' | 'advisory_lock' | 'hold_cursor' | 'listen';

export interface SessionStateChange {
  /** State the statement may leave on its backend once it succeeds. */
  readonly creates: readonly SessionStateKind[];
  /** State it removes, all of it, once it succeeds. */
  readonly clears: readonly SessionStateKind[];
  /**
   * State it may remove without saying whether any is left (`pg_advisory_unlock(k)` of one of
   * several locks, `UNLISTEN` of one of several channels): the backend is asked afterwards.
   */
  readonly mayClear?: readonly SessionStateKind[];
  /** The WITH HOLD cursor it declares. */
  readonly declares: string | undefined;
  /** The cursor it closes (`*`: CLOSE ALL). */
  readonly closes: string | undefined;
  /**
   * It must run on the home node: advisory locks and LISTEN/NOTIFY channels are per server, so
   * every client must meet the same server for them to exclude or reach each other.
   */
  readonly homeOnly: boolean;
}

export const NO_SESSION_STATE: SessionStateChange = Object.freeze({
  creates: Object.freeze([]) as readonly SessionStateKind[],
  clears: Object.freeze([]) as readonly SessionStateKind[],
  declares: undefined,
  closes: undefined,
  homeOnly: false,
});

/** Session-level advisory lock functions (their _xact_ forms end with the transaction). */
const SESSION_LOCKS: ReadonlySet<string> = new Set([
  'pg_advisory_lock',
  'pg_advisory_lock_shared',
  'pg_try_advisory_lock',
  'pg_try_advisory_lock_shared',
]);

const baseName = (f: string): string => {
  const lower = f.toLowerCase();
  return lower.startsWith('pg_catalog.') ? lower.slice('pg_catalog.'.length) : lower;
};

const TEMP_CREATE =
  /^\s*create\s+(or\s+replace\s+)?(local\s+|global\s+)?temp(orary)?\b|\binto\s+(temp|temporary|local\s+temp|local\s+temporary)\b/i;

/** Whether `a` creates a temporary object (table, view, SELECT ... INTO TEMP). */
export function makesTemp(a: Analysis): boolean {
  if (a.kind !== 'ddl' || !a.command.startsWith('create')) return false;
  if (a.createTable?.temporary === true) return true;
  if (a.objects.some((o) => o.schema === 'pg_temp')) return true;
  // SELECT ... INTO is analysed as DDL (create_table_as).
  return a.kind === 'ddl' && TEMP_CREATE.test(a.sql);
}

export function sessionStateOf(a: Analysis): SessionStateChange {
  const creates: SessionStateKind[] = [];
  const clears: SessionStateKind[] = [];
  const mayClear: SessionStateKind[] = [];
  let declares: string | undefined;
  let closes: string | undefined;
  let homeOnly = false;
  if (makesTemp(a)) creates.push('temp_table');
  for (const f of a.functions) {
    const name = baseName(f);
    if (!name.includes('advisory')) continue;
    homeOnly = true;
    if (SESSION_LOCKS.has(name)) creates.push('advisory_lock');
    if (name === 'pg_advisory_unlock_all') clears.push('advisory_lock');
    else if (name === 'pg_advisory_unlock' || name === 'pg_advisory_unlock_shared')
      mayClear.push('advisory_lock');
  }
  switch (a.kind) {
    case 'listen':
      homeOnly = true;
      creates.push('listen');
      break;
    case 'unlisten':
      homeOnly = true;
      if (a.channel === undefined) clears.push('listen');
      else mayClear.push('listen');
      break;
    case 'notify':
      homeOnly = true;
      break;
    case 'discard':
      if (a.target === 'temp') clears.push('temp_table');
      if (a.target === 'all') clears.push('temp_table', 'advisory_lock', 'hold_cursor', 'listen');
      break;
    case 'utility':
      if (a.command === 'declare_cursor' && a.cursor?.hold === true) {
        creates.push('hold_cursor');
        declares = a.cursor.name;
      }
      if (a.command === 'close') closes = a.cursor?.name ?? '*';
      break;
    default:
      break;
  }
  if (
    creates.length === 0 &&
    clears.length === 0 &&
    mayClear.length === 0 &&
    declares === undefined &&
    closes === undefined &&
    !homeOnly
  )
    return NO_SESSION_STATE;
  return { creates, clears, declares, closes, homeOnly, ...(mayClear.length > 0 && { mayClear }) };
}

/** The change of several statements run as one text, in order. */
export function sessionStateOfAll(analyses: readonly Analysis[]): SessionStateChange {
  const changes = analyses.map(sessionStateOf).filter((c) => c !== NO_SESSION_STATE);
  if (changes.length === 0) return NO_SESSION_STATE;
  if (changes.length === 1) return changes[0]!;
  // A later clear undoes an earlier create of the same kind; a create after a clear stands.
  const creates = new Set<SessionStateKind>();
  const clears = new Set<SessionStateKind>();
  const mayClear = new Set<SessionStateKind>();
  for (const c of changes) {
    for (const k of c.clears) {
      creates.delete(k);
      clears.add(k);
    }
    for (const k of c.mayClear ?? []) mayClear.add(k);
    for (const k of c.creates) creates.add(k);
  }
  return {
    creates: [...creates],
    clears: [...clears].filter((k) => !creates.has(k)),
    declares: changes.map((c) => c.declares).findLast((d) => d !== undefined),
    closes: changes.map((c) => c.closes).findLast((d) => d !== undefined),
    homeOnly: changes.some((c) => c.homeOnly),
    ...(mayClear.size > 0 && { mayClear: [...mayClear] }),
  };
}
