// A client's prepared statements under transaction pooling: what it asked to Parse, under its
// own names, and the router-unique name each gets on whichever backend runs it.
import { createHash } from 'node:crypto';
import { Writer, bindParam, bindStatementName, findNul, writeParse } from '@tessera/pg-wire';
import type { Analysis } from '@tessera/sql';
import { route } from '../routing/route.js';
import type { Route } from '../routing/route-types.js';
import type { Snapshot } from '@tessera/keyspace';
import { RouterError, SQLSTATE } from '../errors.js';
import type { Backend } from '../pool/backend.js';
import {
  EXPECT_DESCRIBE_PORTAL,
  EXPECT_EXECUTE,
  EXPECT_SYNC,
  type Expectation,
} from './exchange.js';
import type { InMsg } from './client-in.js';

export class StatementRecord {
  private named: { key: string; name: string } | undefined;

  constructor(
    /** The client's name ('' = unnamed). */
    readonly name: string,
    readonly sql: string,
    readonly paramTypes: readonly number[],
    readonly analyses: readonly Analysis[],
  ) {}

  /** The only statement, if the text holds exactly one. */
  get analysis(): Analysis | undefined {
    return this.analyses.length === 1 ? this.analyses[0] : undefined;
  }

  /**
   * The name on backends: the same text, types and session settings (search_path!) always get
   * the same name, so clients share one server-side statement per backend.
   */
  serverName(settingsKey: string): string {
    if (this.name === '') return '';
    if (this.named?.key !== settingsKey) {
      const h = createHash('sha1')
        .update(this.sql)
        .update('\0')
        .update(this.paramTypes.join(','))
        .update('\0')
        .update(settingsKey)
        .digest('hex');
      this.named = { key: settingsKey, name: `tessera_${h.slice(0, 24)}` };
    }
    return this.named.name;
  }

  parseFrame(serverName: string): Buffer {
    return writeParse(new Writer(256), serverName, this.sql, this.paramTypes).flush();
  }
}

/** The client's prepared statement `name`, or the error Postgres gives for one it does not have. */
export function statementNamed(
  statements: ReadonlyMap<string, StatementRecord>,
  name: string,
): StatementRecord {
  const rec = statements.get(name);
  if (!rec) {
    throw new RouterError(
      SQLSTATE.invalidSqlStatementName,
      name === ''
        ? 'unnamed prepared statement does not exist'
        : `prepared statement "${name}" does not exist`,
    );
  }
  return rec;
}

/**
 * Prepares `rec` on backend `b` unless it is there already (a Parse ahead of the client's Bind or
 * Describe); returns its name on the backend.
 */
export function prepareOn(
  b: Backend,
  rec: StatementRecord,
  settingsKey: string,
  messages: Buffer[],
  expect: Expectation[],
): string {
  const name = rec.serverName(settingsKey);
  if (name === '') {
    if (b.unnamedOwner !== rec) {
      messages.push(rec.parseFrame(''));
      expect.push({ t: 'one', forward: false });
      b.unnamedOwner = rec;
    }
  } else if (!b.prepared.has(name)) {
    messages.push(rec.parseFrame(name));
    expect.push({ t: 'one', forward: false, unprepare: name });
    b.prepared.add(name);
  }
  return name;
}

/** Bind with its statement name replaced by `serverName`, a router name (ASCII, serverName()). */
export function rewriteBindStatement(body: Buffer, serverName: string): Buffer {
  const portalEnd = findNul(body, 0);
  const stmtEnd = findNul(body, portalEnd + 1);
  const nameLength = serverName.length;
  const restLength = body.length - stmtEnd - 1;
  const length = 4 + portalEnd + 1 + nameLength + 1 + restLength;
  const out = Buffer.allocUnsafe(1 + length);
  out[0] = 0x42;
  out.writeInt32BE(length, 1);
  // Byte loops: the pieces are a few dozen bytes, where Buffer.copy's views cost more than copying.
  let at = 5;
  for (let i = 0; i <= portalEnd; i++) out[at++] = body[i]!;
  for (let i = 0; i < nameLength; i++) out[at++] = serverName.charCodeAt(i);
  out[at++] = 0;
  if (restLength > 256) body.copy(out, at, stmtEnd + 1);
  else for (let i = stmtEnd + 1; i < body.length; i++) out[at++] = body[i]!;
  return out;
}

/** Describe or Close of a statement ('S') under another name. */
export function targetFrame(code: number, target: 'S' | 'P', name: string): Buffer {
  const n = Buffer.from(name, 'utf8');
  const out = Buffer.allocUnsafe(1 + 4 + 1 + n.length + 1);
  out[0] = code;
  out.writeInt32BE(4 + 1 + n.length + 1, 1);
  out[5] = target.charCodeAt(0);
  n.copy(out, 6);
  out[6 + n.length] = 0;
  return out;
}

/** A batch the lean paths can take: a prepared statement's run, its record and its one statement. */
export interface PreparedRun {
  readonly rec: StatementRecord;
  readonly analysis: Analysis;
}

/**
 * The shape drivers send to run a prepared statement, Bind, [Describe portal,] Execute, Sync, of
 * a statement the client prepared with one statement in it: looked up once per batch for the
 * paths that skip the general batch handling (pipelined.ts, held.ts). Undefined otherwise.
 */
export function preparedRun(
  statements: ReadonlyMap<string, StatementRecord>,
  batch: readonly InMsg[],
): PreparedRun | undefined {
  const n = batch.length;
  if (n < 3 || n > 4) return undefined;
  if (batch[0]!.code !== 0x42 || batch[n - 2]!.code !== 0x45 || batch[n - 1]!.code !== 0x53)
    return undefined;
  if (n === 4 && (batch[1]!.code !== 0x44 || batch[1]!.body[0] !== 0x50)) return undefined;
  const rec = statements.get(bindStatementName(batch[0]!.body));
  const analysis = rec?.analysis;
  return rec === undefined || analysis === undefined ? undefined : { rec, analysis };
}

/** The route of `bind`'s statement; undefined if routing throws (the general path reports it). */
export function routeOfBind(a: Analysis, catalog: Snapshot, bind: InMsg): Route | undefined {
  try {
    return route(a, catalog, (k) => bindParam(bind.body, k));
  } catch {
    return undefined;
  }
}

/** The [Describe,] Execute and Sync of a preparedRun batch, forwarded as they came. */
export function pushExecutionTail(
  batch: readonly InMsg[],
  messages: Buffer[],
  expect: Expectation[],
): void {
  for (let k = 1; k < batch.length; k++) {
    const m = batch[k]!;
    messages.push(m.raw);
    expect.push(
      m.code === 0x44 ? EXPECT_DESCRIBE_PORTAL : m.code === 0x45 ? EXPECT_EXECUTE : EXPECT_SYNC,
    );
  }
}
