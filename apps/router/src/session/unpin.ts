// A pinned backend whose state a statement may have released: `pg_advisory_unlock(k)` of one of
// the session's locks, `UNLISTEN ch` of one of its channels. Whether any is left only the node
// knows, so the router asks it, after the statement and before the client's next message, once
// the session is outside a transaction: with no advisory lock and no channel left (and no other
// state: pins.ts), the backend serves the pool again. Job queues and migration tools lock and
// unlock around their work; without this, each such client would keep a backend to itself until
// it disconnects.
import {
  BackendCode,
  FrameReader,
  Writer,
  decodeDataRow,
  frameBytes,
  writeQuery,
} from '@tessera/pg-wire';
import type { SessionStateKind } from '@tessera/sql';
import { applyState, lost, settle } from '../execute/backends.js';
import { run1 } from '../execute/run.js';
import { HeldOut } from './client-out.js';
import type { Session } from './session.js';

/** The session-level advisory locks and the channels the backend holds (outside a transaction). */
const PROBE_SQL =
  "select (select count(*) from pg_catalog.pg_locks where locktype = 'advisory' " +
  'and pid = pg_catalog.pg_backend_pid())::int, ' +
  '(select count(*) from pg_catalog.pg_listening_channels())::int';

/**
 * Asks the pinned backends a statement may have freed (applyState noted them); undefined when
 * there is none to ask now. Inside a transaction (UNLISTEN takes effect at its commit) or an open
 * cycle the question waits for a later statement.
 */
export function probePins(s: Session): Promise<void> | undefined {
  const nodes = s.unpinProbes;
  if (nodes === undefined || s.closed || s.inTransaction() || s.cycle !== undefined)
    return undefined;
  s.unpinProbes = undefined;
  return probeNodes(s, [...nodes]);
}

async function probeNodes(s: Session, nodes: readonly string[]): Promise<void> {
  for (const node of nodes) {
    const h = s.held.get(node);
    if (h === undefined || h.backend.dead || !s.pinned.has(node)) continue;
    const out = new HeldOut(true);
    try {
      const query = writeQuery(new Writer(PROBE_SQL.length + 16), PROBE_SQL).flush();
      await run1(s, h.backend, [query], [{ t: 'query', ready: false }], false, out);
    } catch (e) {
      // The node is lost (the next statement hears it) or refused: the state stays pinned.
      s.services.log.debug({ err: e, node }, 'asking a pinned backend for its state failed');
      if (h.backend.dead) lost(s, h.backend);
      continue;
    }
    const [locks, channels] = counted(s, out.pieces);
    const clears: SessionStateKind[] = [];
    if (locks === 0) clears.push('advisory_lock');
    if (channels === 0) clears.push('listen');
    if (clears.length === 0) continue;
    applyState(s, node, {
      creates: [],
      clears,
      declares: undefined,
      closes: undefined,
      homeOnly: false,
    });
    settle(s, node);
  }
}

/** The probe's counts from its answer (runs of whole frames); a notification in it goes on. */
function counted(s: Session, pieces: readonly Buffer[]): (number | undefined)[] {
  const reader = new FrameReader();
  let counts: number[] = [];
  for (const piece of pieces) reader.push(piece);
  for (let f = reader.next(); f; f = reader.next()) {
    if (f.code === BackendCode.DataRow)
      counts = decodeDataRow(f.body).map((v) => Number(v?.toString('utf8')));
    else if (f.code === BackendCode.NotificationResponse) s.out.push(Buffer.from(frameBytes(f)));
  }
  s.out.flush();
  return counts;
}
