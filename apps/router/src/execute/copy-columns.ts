// The columns a COPY into a sharded table carries, asked of a node when the statement does not
// list them (and, for the binary format, the key column's type, whose binary form the router
// must read to hash it): the key's place among them and how to hash it.
import { BackendCode, FrameReader, Writer, decodeDataRow, writeQuery } from '@tessera/pg-wire';
import { hashKeyBinary, type KeyType } from '@tessera/pg-hash';
import type { Snapshot } from '@tessera/keyspace';
import { quoteLiteral, quoteQualified, type CopyFromAnalysis } from '@tessera/sql';
import { RouterError, unsupported } from '../errors.js';
import type { CopyRoute } from '../routing/route-types.js';
import { HeldOut } from '../session/client-out.js';
import type { Session } from '../session/session.js';
import { engage, settle } from './backends.js';
import { run1 } from './run.js';

export interface CopyColumns {
  /** The key's place among the COPY's columns. */
  readonly index: number;
  readonly columns: readonly string[];
  /** Binary format: the hash of a key field's bytes (throws for bytes its type cannot have). */
  readonly hashBinary?: (bytes: Buffer) => bigint;
}

type SplitRoute = CopyRoute & { mode: 'split' };

/** The key types by the type a column has (a domain: its base type), for binary fields. */
const BINARY_KEY_TYPES: Readonly<Record<string, KeyType>> = {
  bigint: 'bigint',
  integer: 'int',
  smallint: 'smallint',
  text: 'text',
  'character varying': 'text',
  uuid: 'uuid',
};

const INTEGER_KEYS: ReadonlySet<KeyType> = new Set(['bigint', 'int', 'smallint']);

/** The key's place among the COPY's columns (the table's, asked of `node`, when it lists none). */
export async function copyColumns(
  s: Session,
  a: CopyFromAnalysis,
  r: SplitRoute,
  node: string,
  catalog: Snapshot,
): Promise<CopyColumns> {
  const { keyColumn, schema, table } = r;
  const binary = a.options.format === 'binary';
  let columns = a.columns;
  let keyType: string | undefined;
  if (columns === undefined || binary) {
    const rows = await tableColumns(s, quoteQualified(schema, table), node, catalog);
    columns ??= rows.map((c) => c.name);
    keyType = rows.find((c) => c.name === keyColumn)?.type;
  }
  const index = columns.indexOf(keyColumn);
  if (index < 0)
    throw unsupported(
      `COPY into sharded table ${schema}.${table} must include its key column "${keyColumn}"`,
    );
  if (!binary) return { index, columns };
  const ks = r.keyspace;
  const hashAs = keyType === undefined ? undefined : BINARY_KEY_TYPES[keyType];
  const fits =
    hashAs !== undefined &&
    (hashAs === ks.keyType || (INTEGER_KEYS.has(hashAs) && INTEGER_KEYS.has(ks.keyType)));
  if (!fits)
    throw unsupported(
      `COPY FROM in binary format into sharded table ${schema}.${table} is not supported for its key column "${keyColumn}" of type ${keyType ?? 'unknown'} in a ${ks.keyType} keyspace; use text or csv`,
    );
  // Equal int2/int4/int8 values hash alike, so an int column of a bigint keyspace hashes as int.
  return { index, columns, hashBinary: (bytes) => hashKeyBinary(hashAs, bytes, ks.seed) };
}

/** The table's columns COPY takes (no dropped or generated ones), with their (base) types. */
export async function tableColumns(
  s: Session,
  table: string,
  node: string,
  catalog: Snapshot,
): Promise<{ name: string; type: string }[]> {
  const sql =
    'SELECT a.attname, format_type(CASE WHEN t.typtype = ' +
    "'d' THEN t.typbasetype ELSE a.atttypid END, NULL) FROM pg_catalog.pg_attribute a " +
    'JOIN pg_catalog.pg_type t ON t.oid = a.atttypid WHERE a.attrelid = ' +
    `${quoteLiteral(table)}::regclass AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = '' ORDER BY a.attnum`;
  const e = await engage(s, node, catalog);
  e.messages.push(writeQuery(new Writer(sql.length + 16), sql).flush());
  e.expect.push({ t: 'query', ready: false });
  const out = new HeldOut(true);
  const res = await run1(s, e.backend, e.messages, e.expect, false, out);
  settle(s, node);
  if (res.error) {
    s.services.metrics.error(res.error.code);
    throw new RouterError(res.error.code, res.error.message);
  }
  const reader = new FrameReader();
  const rows: { name: string; type: string }[] = [];
  for (const p of out.pieces) reader.push(Buffer.from(p));
  for (let f = reader.next(); f; f = reader.next()) {
    if (f.code !== BackendCode.DataRow) continue;
    const [name, type] = decodeDataRow(f.body).map((v) => v?.toString('utf8') ?? '');
    rows.push({ name: name!, type: type! });
  }
  return rows;
}
