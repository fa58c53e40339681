// Small helpers over libpg-query's JSON parse tree (nodes are `{ Tag: body }` wrappers).
import type { Node, TypeName, RangeVar } from 'libpg-query';

/** The texts of a list of `String` nodes (qualified names, column lists). */
export function stringList(nodes: readonly Node[] | undefined): string[] {
  const out: string[] = [];
  for (const n of nodes ?? []) {
    if ('String' in n) out.push(n.String.sval ?? '');
    else if ('A_Star' in n) out.push('*');
  }
  return out;
}

/** The wrapper tag of a node (`SelectStmt`, `A_Const`, ...). */
export function tagOf(node: Node): string {
  for (const k in node) return k;
  return '';
}

/** `SelectStmt` -> `select`, `DeclareCursorStmt` -> `declare_cursor`. */
export function snakeCommand(tag: string): string {
  return tag
    .replace(/Stmt$/, '')
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toLowerCase();
}

/** A type as Postgres would print it, without the `pg_catalog.` prefix: `int8`, `varchar(20)`, `text[]`. */
export function typeNameText(t: TypeName | undefined): string {
  if (t === undefined) return '';
  let names = stringList(t.names);
  if (names.length > 1 && names[0] === 'pg_catalog') names = names.slice(1);
  let text = names.join('.');
  if (t.pct_type === true) text += '%type';
  const mods: string[] = [];
  for (const m of t.typmods ?? []) {
    if ('A_Const' in m) {
      const c = m.A_Const;
      if (c.ival !== undefined) mods.push(String(c.ival.ival ?? 0));
      else if (c.sval !== undefined) mods.push(c.sval.sval ?? '');
      else if (c.fval !== undefined) mods.push(c.fval.fval ?? '');
    } else if ('ColumnRef' in m) mods.push(stringList(m.ColumnRef.fields).join('.'));
  }
  // interval fields are encoded as a bit mask typmod; only plain modifiers are printed.
  if (mods.length > 0 && text !== 'interval') text += `(${mods.join(',')})`;
  for (const b of t.arrayBounds ?? []) {
    const n = 'Integer' in b ? (b.Integer.ival ?? 0) : -1;
    text += n >= 0 ? `[${n}]` : '[]';
  }
  if (t.setof === true) text = `setof ${text}`;
  return text;
}

export interface QualifiedName {
  readonly schema: string | undefined;
  readonly name: string;
}

/** `[schema, ] name` from a qualified-name list (`[catalog, schema, name]` keeps schema, name). */
export function qualifiedName(parts: readonly string[]): QualifiedName {
  const name = parts[parts.length - 1] ?? '';
  const schema = parts.length >= 2 ? parts[parts.length - 2] : undefined;
  return { schema, name };
}

export function rangeVarName(rv: RangeVar): QualifiedName {
  return { schema: rv.schemaname, name: rv.relname ?? '' };
}

/** The argument of a DefElem (`format csv`, `header true`, `header`) as text; `true` when absent. */
export function defElemArg(arg: Node | undefined): string | true {
  if (arg === undefined) return true;
  if ('String' in arg) return arg.String.sval ?? '';
  if ('Boolean' in arg) return arg.Boolean.boolval === true ? 'true' : 'false';
  if ('Integer' in arg) return String(arg.Integer.ival ?? 0);
  if ('Float' in arg) return arg.Float.fval ?? '';
  if ('A_Star' in arg) return '*';
  if ('List' in arg) return stringList(arg.List.items).join(',');
  if ('TypeName' in arg) return typeNameText(arg.TypeName);
  if ('A_Const' in arg) {
    const c = arg.A_Const;
    if (c.sval !== undefined) return c.sval.sval ?? '';
    if (c.ival !== undefined) return String(c.ival.ival ?? 0);
    if (c.fval !== undefined) return c.fval.fval ?? '';
    if (c.boolval !== undefined) return c.boolval.boolval === true ? 'true' : 'false';
  }
  return '';
}

export interface DefElemEntry {
  readonly name: string;
  readonly arg: Node | undefined;
}

export function defElems(nodes: readonly Node[] | undefined): DefElemEntry[] {
  const out: DefElemEntry[] = [];
  for (const n of nodes ?? [])
    if ('DefElem' in n) out.push({ name: n.DefElem.defname ?? '', arg: n.DefElem.arg });
  return out;
}
