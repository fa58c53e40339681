// Whether a statement may change data on the node that runs it. A transaction that wrote on more
// than one node must commit with two-phase commit; one that only read elsewhere needs no PREPARE
// there. Conservative on purpose: anything not clearly read-only counts as a write, because
// calling a write "read-only" could commit half a transaction, while the opposite only costs 2PC.
import type { Analysis } from '@tessera/sql';

/**
 * Functions known to read only (no side effect, no write through SPI, no waiting on other
 * sessions). A function not listed may be a user's volatile function that writes, so a SELECT
 * calling it counts as a write (and is never pipelined with other clients' reads).
 */
const READ_ONLY_FUNCTIONS: ReadonlySet<string> = new Set([
  'count',
  'sum',
  'avg',
  'min',
  'max',
  'bool_and',
  'bool_or',
  'every',
  'string_agg',
  'array_agg',
  'json_agg',
  'jsonb_agg',
  'json_object_agg',
  'jsonb_object_agg',
  'stddev',
  'variance',
  'lower',
  'upper',
  'length',
  'char_length',
  'octet_length',
  'substr',
  'substring',
  'trim',
  'btrim',
  'ltrim',
  'rtrim',
  'replace',
  'concat',
  'concat_ws',
  'format',
  'left',
  'right',
  'position',
  'strpos',
  'split_part',
  'md5',
  'abs',
  'round',
  'floor',
  'ceil',
  'ceiling',
  'trunc',
  'mod',
  'power',
  'sqrt',
  'greatest',
  'least',
  'now',
  'current_timestamp',
  'current_date',
  'date_trunc',
  'date_part',
  'extract',
  'to_char',
  'to_date',
  'to_timestamp',
  'age',
  'coalesce',
  'nullif',
  'array_length',
  'cardinality',
  'unnest',
  'generate_series',
  'jsonb_build_object',
  'json_build_object',
  'to_json',
  'to_jsonb',
  'row_number',
  'rank',
  'dense_rank',
  'lag',
  'lead',
  'version',
  'current_setting',
  'current_database',
  'current_user',
  'current_schema',
  'pg_typeof',
  'hashint8extended',
  'hashint4extended',
  'hashtextextended',
]);

/** True unless `a` is clearly read-only. Undefined (an unknown statement) counts as a write. */
export function isWrite(a: Analysis | undefined): boolean {
  if (a === undefined) return true;
  switch (a.kind) {
    case 'select':
      return (
        a.hasDataModifyingCtes ||
        a.shape.hasLocking ||
        a.hasVolatileFunctions ||
        !a.functions.every(isReadOnlyFunction)
      );
    case 'copy_to':
      return a.query !== undefined && isWrite(a.query);
    case 'explain':
      return a.analyze && isWrite(a.inner);
    case 'show':
      return false;
    case 'utility':
      // Cursor traffic reads whatever its DECLARE read; the DECLARE itself is judged by its query.
      if (a.command === 'fetch' || a.command === 'move' || a.command === 'close') return false;
      if (a.command === 'declare_cursor') return a.query === undefined || isWrite(a.query);
      return true;
    // Transaction control and settings change no data; the session replays them itself.
    case 'transaction':
    case 'set':
      return false;
    default:
      return true;
  }
}

function isReadOnlyFunction(name: string): boolean {
  const base = name.startsWith('pg_catalog.') ? name.slice('pg_catalog.'.length) : name;
  return READ_ONLY_FUNCTIONS.has(base);
}
