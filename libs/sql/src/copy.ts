// COPY: direction, table and columns, and the effective format options the router needs to split
// a COPY FROM STDIN stream by row owner (or merge COPY TO STDOUT).
import type { CopyStmt, Node } from 'libpg-query';
import type { CopyFromAnalysis, CopyOptions, CopyToAnalysis } from './types.js';
import type { StatementContext } from './context.js';
import { baseOf } from './context.js';
import { collect } from './collect.js';
import { defElemArg, defElems, stringList } from './ast.js';
import { copyQueryText } from './inner.js';
import { quoteIdent, quoteLiteral } from './quote.js';

function truthy(v: string | true): boolean {
  return v === true || ['true', 'on', '1', 'yes'].includes(v.toLowerCase());
}

function columnsOption(arg: Node | undefined): readonly string[] | '*' {
  if (arg !== undefined && 'A_Star' in arg) return '*';
  if (arg !== undefined && 'List' in arg) return stringList(arg.List.items);
  return [];
}

export function copyOptions(nodes: readonly Node[] | undefined): CopyOptions {
  const raw: Record<string, string | true> = {};
  let forceQuote: readonly string[] | '*' | undefined;
  let forceNotNull: readonly string[] | '*' | undefined;
  let forceNull: readonly string[] | '*' | undefined;
  for (const { name, arg } of defElems(nodes)) {
    raw[name] = defElemArg(arg);
    if (name === 'force_quote') forceQuote = columnsOption(arg);
    else if (name === 'force_not_null') forceNotNull = columnsOption(arg);
    else if (name === 'force_null') forceNull = columnsOption(arg);
  }
  const text = (name: string): string | undefined => {
    const v = raw[name];
    return v === undefined || v === true ? undefined : v;
  };
  const formatText = (text('format') ?? 'text').toLowerCase();
  const format: CopyOptions['format'] =
    formatText === 'csv' ? 'csv' : formatText === 'binary' ? 'binary' : 'text';
  const csv = format === 'csv';
  const headerRaw = raw['header'];
  const header =
    headerRaw === undefined
      ? false
      : headerRaw !== true && headerRaw.toLowerCase() === 'match'
        ? 'match'
        : truthy(headerRaw);
  const quote = text('quote') ?? '"';
  return {
    format,
    delimiter: text('delimiter') ?? (csv ? ',' : '\t'),
    null: text('null') ?? (csv ? '' : '\\N'),
    header,
    quote,
    escape: text('escape') ?? quote,
    encoding: text('encoding'),
    freeze: raw['freeze'] !== undefined && truthy(raw['freeze']),
    forceQuote,
    forceNotNull,
    forceNull,
    defaultString: text('default'),
    onError: text('on_error'),
    raw,
  };
}

/**
 * The options of a COPY as SQL (` WITH (name 'value', ...)`, empty when it has none), written out
 * again from what was parsed: for a COPY the router rewrites (a table copied as a query).
 */
export function copyOptionsSql(options: CopyOptions): string {
  const lists: Readonly<Record<string, readonly string[] | '*' | undefined>> = {
    force_quote: options.forceQuote,
    force_not_null: options.forceNotNull,
    force_null: options.forceNull,
  };
  const items = Object.entries(options.raw).map(([name, value]) => {
    const list = lists[name];
    if (list !== undefined)
      return `${name} ${list === '*' ? '*' : `(${list.map(quoteIdent).join(', ')})`}`;
    return value === true ? name : `${name} ${quoteLiteral(value)}`;
  });
  return items.length === 0 ? '' : ` WITH (${items.join(', ')})`;
}

export function analyzeCopy(
  ctx: StatementContext,
  node: Node,
  s: CopyStmt,
): CopyFromAnalysis | CopyToAnalysis {
  const target = s.relation;
  const columns = s.attlist === undefined ? undefined : stringList(s.attlist);
  const options = copyOptions(s.options);
  if (s.is_from === true) {
    const c = collect(node, {
      top: new Set(target ? [target] : []),
      targets: new Set(target ? [target] : []),
    });
    return {
      kind: 'copy_from',
      ...baseOf(ctx, c),
      targetIndex: target === undefined ? -1 : (c.indexOf.get(target) ?? -1),
      columns,
      source: s.is_program === true ? 'program' : s.filename !== undefined ? 'file' : 'stdin',
      filename: s.filename,
      options,
      hasWhere: s.whereClause !== undefined,
    };
  }
  const c = collect(node, { top: new Set(target ? [target] : []) });
  let query: CopyToAnalysis['query'];
  if (s.query !== undefined) {
    const inner = copyQueryText(ctx.sql);
    query = ctx.analyzeInner(s.query, inner.sql, ctx.location + inner.offset);
  }
  return {
    kind: 'copy_to',
    ...baseOf(ctx, c),
    tableIndex: target === undefined ? undefined : c.indexOf.get(target),
    columns,
    query,
    destination: s.is_program === true ? 'program' : s.filename !== undefined ? 'file' : 'stdout',
    filename: s.filename,
    options,
  };
}
