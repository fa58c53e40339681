// COPY: direction, table and columns, and the effective format options the router needs to split
// a COPY FROM STDIN stream by row owner (or merge COPY TO STDOUT).
import type { CopyStmt, Node } from 'libpg-query';
import type { CopyFromAnalysis, CopyOptions, CopyToAnalysis } from './types.js';
import type { StatementContext } from './context.js';
import { baseOf } from './context.js';
import { collect } from './collect.js';
import { defElemArg, defElems, stringList } from './ast.js';
import { copyQueryText } from './inner.js';

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
