// A client's prepared statements under transaction pooling: what it asked to Parse, under its
// own names, and the router-unique name each gets on whichever backend runs it.
import { createHash } from 'node:crypto';
import { FrontendCode, Writer, writeParse } from '@tessera/pg-wire';
import type { Snapshot } from '@tessera/keyspace';
import type { Analysis } from '@tessera/sql';
import { RouterError, SQLSTATE } from '../errors.js';
import type { Backend } from '../pool/backend.js';
import type { Expectation } from '../execute/exchange.js';
import type { InMsg } from '../session/client-in.js';

export class StatementRecord {
  private named: { key: string; name: string } | undefined;
  /**
   * session/rewrite.ts's copy of this statement with views and fences rewritten, for the named
   * snapshot it was made under (kept here: looked up at every Bind).
   */
  rewritten: { catalog: Snapshot; rec: StatementRecord | undefined } | undefined;

  constructor(
    /** The client's name ('' = unnamed). */
    readonly name: string,
    readonly sql: string,
    readonly paramTypes: readonly number[],
    readonly analyses: readonly Analysis[],
    /** SQL PREPARE: the parameter types as a node named them (what EXECUTE's arguments become). */
    readonly typeNames?: readonly string[],
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

/** The target byte of a Describe of a portal ('P'). */
const PORTAL = 0x50;

/**
 * Whether `batch` is the shape drivers send to run one prepared statement: Bind, [Describe
 * portal,] Execute, Sync (the shape whose read may share a lane: execute/acquire.ts).
 */
export function isSingleRun(batch: readonly InMsg[]): boolean {
  const n = batch.length;
  if (n < 3 || n > 4) return false;
  if (
    batch[0]!.code !== FrontendCode.Bind ||
    batch[n - 2]!.code !== FrontendCode.Execute ||
    batch[n - 1]!.code !== FrontendCode.Sync
  )
    return false;
  // raw[5]: the body's first byte (after the type byte and the length word), read without
  // making the body's view: this runs for every prepared statement.
  return n === 3 || (batch[1]!.code === FrontendCode.Describe && batch[1]!.raw[5] === PORTAL);
}
