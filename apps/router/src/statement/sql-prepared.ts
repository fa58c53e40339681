// SQL-level PREPARE and EXECUTE under transaction pooling. PREPARE is checked by a node (which
// gives Postgres's own errors and the parameter types it resolved) and kept as the session's
// statement record, in the namespace the extended protocol's named statements use, as in
// Postgres; it is prepared lazily on whichever backend runs it. EXECUTE becomes a Bind of that
// record whose values are its arguments in text form, so it routes by key and runs as the
// extended protocol's Bind/Execute of the same statement does.
import { FrontendCode, WholeFrame, Writer, decodeBind, writeBind } from '@tessera/pg-wire';
import type { ExecuteAnalysis, PrepareAnalysis, RowValue } from '@tessera/sql';
import { RouterError, SQLSTATE, unsupported } from '../errors.js';
import { OID } from '../routing/key-convert.js';
import { filledRecord, prefillBatch, type Prefilled } from '../sequences/prefill.js';
import type { InMsg } from '../session/client-in.js';
import type { Session } from '../session/session.js';
import { askInSession } from './ask-session.js';
import { StatementRecord, statementNamed } from './prepared.js';

/**
 * A name for one of the router's own checks, never one the router or a client uses on backends
 * (router statement names are tessera_<hex>). Unique, so that a check left prepared by a failed
 * transaction (its DEALLOCATE could not run there) never makes a later one fail.
 */
let checks = 0;
const checkName = (): string => `tessera_check_${++checks}`;

/** `PREPARE name [(types)] AS statement`, checked on a node and recorded. */
export async function prepareSql(s: Session, a: PrepareAnalysis): Promise<void> {
  if (s.statements.has(a.name))
    throw new RouterError(
      SQLSTATE.duplicatePreparedStatement,
      `prepared statement "${a.name}" already exists`,
    );
  const innerAt = a.sql.lastIndexOf(a.inner.sql);
  const head = a.sql.slice(0, innerAt);
  const check = checkName();
  const named = /^(prepare\s+)("(?:[^"]|"")*"|[^\s(]+)/i.exec(head);
  const ownHead =
    named === null
      ? `PREPARE ${check}${a.paramTypes.length > 0 ? ` (${a.paramTypes.join(', ')})` : ''} AS `
      : `${named[1]}${check}${head.slice(named[0].length)}`;
  const rows = await askInSession(s, {
    sql:
      `${ownHead}${a.inner.sql}\n; SELECT t::oid, t::text FROM pg_prepared_statements, ` +
      `unnest(parameter_types) WITH ORDINALITY AS u(t, n) WHERE name = '${check}' ORDER BY n`,
    cleanup: `DEALLOCATE ${check}`,
    clientOffset: named === null ? undefined : a.sql.length - a.inner.sql.length - ownHead.length,
  });
  // The check ran on a node; the name may have been taken meanwhile by a pipelined Parse.
  if (s.statements.has(a.name))
    throw new RouterError(
      SQLSTATE.duplicatePreparedStatement,
      `prepared statement "${a.name}" already exists`,
    );
  const oids = rows.map((r) => Number(r[0]));
  const names = rows.map((r) => r[1] ?? 'unknown');
  s.statements.set(a.name, new StatementRecord(a.name, a.inner.sql, oids, [a.inner], names));
}

/** The statement an EXECUTE runs and its arguments as text values of the statement's types. */
export interface ExecuteBind {
  readonly rec: StatementRecord;
  readonly values: readonly (string | null)[];
}

/**
 * Postgres's checks of an EXECUTE's arguments, and their values (asked of a node when needed;
 * not while `queued`: messages wait for the session's backend, and the question would pass them).
 */
export function executeBind(
  s: Session,
  a: ExecuteAnalysis,
  queued = false,
): ExecuteBind | Promise<ExecuteBind> {
  for (const p of a.params)
    if (p.kind !== 'const')
      throw unsupported(
        'EXECUTE through the router takes constant arguments only (literals, optionally cast); pass bind parameters or expressions through the extended query protocol instead',
      );
  const rec = statementNamed(s.statements, a.name);
  const inner = rec.analysis;
  if (inner === undefined || inner.kind === 'execute')
    throw unsupported(`EXECUTE of prepared statement "${a.name}" is not supported by the router`);
  const expected = Math.max(rec.paramTypes.length, inner.paramCount);
  if (a.params.length !== expected)
    throw new RouterError(
      '42601',
      `wrong number of parameters for prepared statement "${a.name}"`,
      'ERROR',
      `Expected ${expected} parameters but got ${a.params.length}.`,
    );
  const direct = directValues(a.params, rec.paramTypes);
  if (direct !== undefined) return { rec, values: direct };
  const names = rec.typeNames;
  if (names === undefined || names.length !== expected)
    throw unsupported(
      `EXECUTE of "${a.name}", prepared through the extended protocol without parameter types, takes only string literals and NULL through the router`,
    );
  if (queued)
    throw unsupported(
      'EXECUTE with arguments other than string literals, NULL and integers after other statements in one pipeline is not supported by the router; send a Sync first',
    );
  return evaluated(s, a, rec, names);
}

const INT_RANGE: Readonly<Record<number, readonly [bigint, bigint]>> = {
  [OID.int2]: [-32768n, 32767n],
  [OID.int4]: [-2147483648n, 2147483647n],
  [OID.int8]: [-9223372036854775808n, 9223372036854775807n],
};
const NUMERIC = 1700;

/**
 * The values Postgres would bind without a node having to say: an untyped string literal or NULL
 * (an unknown-typed constant is read by the type's input function, as a text Bind value is), and
 * an integer literal for an integer or numeric parameter it fits. Undefined otherwise.
 */
function directValues(
  params: readonly RowValue[],
  types: readonly number[],
): (string | null)[] | undefined {
  const out: (string | null)[] = [];
  for (const [i, p] of params.entries()) {
    if (p.kind !== 'const' || p.typeName !== undefined) return undefined;
    if (p.literal === 'null' || p.text === null) out.push(null);
    else if (p.literal === 'string') out.push(p.text);
    else if (p.literal === 'integer' && fitsInteger(p.text, types[i] ?? 0)) out.push(p.text);
    else return undefined;
  }
  return out;
}

function fitsInteger(text: string, type: number): boolean {
  if (!/^-?\d+$/.test(text)) return false;
  if (type === NUMERIC) return true;
  const range = INT_RANGE[type];
  if (range === undefined) return false;
  const v = BigInt(text);
  return v >= range[0] && v <= range[1];
}

/** The arguments coerced by a node exactly as its EXECUTE would (assignment casts, its errors). */
async function evaluated(
  s: Session,
  a: ExecuteAnalysis,
  rec: StatementRecord,
  names: readonly string[],
): Promise<ExecuteBind> {
  const named = /^(execute\s+)("(?:[^"]|"")*"|[^\s(]+)\s*/i.exec(a.sql);
  if (named === null)
    throw unsupported(
      'this EXECUTE could not be read by the router; write it as EXECUTE name(...)',
    );
  const args = a.sql.slice(named[0].length);
  const check = checkName();
  const own = `EXECUTE ${check} `;
  const select = names.map((_, i) => `$${i + 1}`).join(', ');
  const prepare = `PREPARE ${check} (${names.join(', ')}) AS SELECT ${select}; `;
  const rows = await askInSession(s, {
    sql: `${prepare}${own}${args}`,
    cleanup: `DEALLOCATE ${check}`,
    clientOffset: named[0].length - (prepare.length + own.length),
  });
  const row = rows[0];
  if (row === undefined) throw new Error('the node evaluated no EXECUTE arguments');
  return { rec, values: row };
}

/** The Bind an EXECUTE stands for, into `portal`, results in `resultFormats`. */
export function executeBindMessage(
  e: ExecuteBind,
  portal: string,
  resultFormats: readonly number[],
): InMsg {
  const raw = writeBind(new Writer(64), {
    portal,
    statement: e.rec.name,
    params: e.values,
    resultFormats,
  }).flush();
  return WholeFrame.of(FrontendCode.Bind, raw);
}

/** What an extended-protocol Bind of an SQL EXECUTE is bound as. */
export interface AsBind {
  readonly bind: InMsg;
  /** The statement it runs, with its cluster-wide sequence values filled in if it has some. */
  readonly rec: StatementRecord;
  /** Whether `rec` was filled (its Bind then names it as the unnamed statement). */
  readonly filled: boolean;
}

/**
 * The client's Bind `m` of `EXECUTE p(args)` into `portal`, given to `bind` as the Bind of p with
 * the arguments as values, its sequence values filled as a Bind of p's would be (`queued`: see
 * executeBind). In the extended protocol's order: synchronous when nothing has to wait.
 */
export function executeAsBind(
  s: Session,
  m: InMsg,
  portal: string,
  a: ExecuteAnalysis,
  queued: boolean,
  bind: (e: AsBind) => Promise<void> | undefined,
): Promise<void> | undefined {
  const got = asBind(s, m, portal, a, queued);
  return got instanceof Promise ? got.then(bind) : bind(got);
}

function asBind(
  s: Session,
  m: InMsg,
  portal: string,
  a: ExecuteAnalysis,
  queued: boolean,
): AsBind | Promise<AsBind> {
  const fill = (bind: InMsg, rec: StatementRecord, p: Prefilled | undefined): AsBind => {
    const own = filledRecord(s, p?.get(0), rec);
    return { bind, rec: own ?? rec, filled: own !== undefined };
  };
  const go = (e: ExecuteBind): AsBind | Promise<AsBind> => {
    const bind = executeBindMessage(e, portal, decodeBind(m.body).resultFormats);
    const pre = prefillBatch(s, [bind]);
    return pre instanceof Promise ? pre.then((p) => fill(bind, e.rec, p)) : fill(bind, e.rec, pre);
  };
  const got = executeBind(s, a, queued);
  return got instanceof Promise ? got.then(go) : go(got);
}
