// Quoting identifiers and literals exactly as Postgres's quote_ident() and quote_literal() do.

/** Keywords that are not UNRESERVED (COL_NAME, TYPE_FUNC_NAME, RESERVED), from Postgres 18 kwlist.h. */
const NON_UNRESERVED_KEYWORDS = new Set(
  (
    'all analyse analyze and any array as asc asymmetric authorization between bigint binary bit boolean both ' +
    'case cast char character check coalesce collate collation column concurrently constraint create cross ' +
    'current_catalog current_date current_role current_schema current_time current_timestamp current_user ' +
    'dec decimal default deferrable desc distinct do else end except exists extract false fetch float for ' +
    'foreign freeze from full grant greatest group grouping having ilike in initially inner inout int integer ' +
    'intersect interval into is isnull join json json_array json_arrayagg json_exists json_object ' +
    'json_objectagg json_query json_scalar json_serialize json_table json_value lateral leading least left ' +
    'like limit localtime localtimestamp merge_action national natural nchar none normalize not notnull null ' +
    'nullif numeric offset on only or order out outer overlaps overlay placing position precision primary ' +
    'real references returning right row select session_user setof similar smallint some substring ' +
    'symmetric system_user table tablesample then time timestamp to trailing treat trim true union unique ' +
    'user using values varchar variadic verbose when where window with xmlattributes xmlconcat xmlelement ' +
    'xmlexists xmlforest xmlnamespaces xmlparse xmlpi xmlroot xmlserialize xmltable'
  ).split(' '),
);

const SAFE_IDENT = /^[a-z_][a-z0-9_$]*$/;

/** `quote_ident`: double-quotes unless lower-case-safe and not a (non-unreserved) keyword. */
export function quoteIdent(name: string): string {
  if (SAFE_IDENT.test(name) && !NON_UNRESERVED_KEYWORDS.has(name)) return name;
  return '"' + name.replaceAll('"', '""') + '"';
}

/** `quote_literal` (and `quote_nullable` for null): `'it''s'`, `E'a\\b'` when backslashes occur. */
export function quoteLiteral(text: string | null): string {
  if (text === null) return 'NULL';
  const body = text.replaceAll("'", "''");
  if (text.includes('\\')) return "E'" + body.replaceAll('\\', '\\\\') + "'";
  return "'" + body + "'";
}

/** `schema.name` with each part quoted as needed (schema omitted when undefined). */
export function quoteQualified(schema: string | undefined, name: string): string {
  return schema === undefined ? quoteIdent(name) : `${quoteIdent(schema)}.${quoteIdent(name)}`;
}
