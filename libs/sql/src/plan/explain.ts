// explainPlan(plan): the plan as an indented tree, one primitive per line with its arguments and
// the leaf SQL, like EXPLAIN. Golden files compare this text, so a planning change shows in review.
import type {
  FinalColumn,
  LimitValue,
  Operand,
  PlanNode,
  Predicate,
  ReadPlanResult,
  SortKey,
} from './types.js';
import { exprText } from './expression.js';

function assertNever(x: never): never {
  throw new Error(`unexpected plan node ${JSON.stringify(x)}`);
}

function col(i: number): string {
  return i >= 0 ? `#${i}` : `#end${i}`;
}

function key(k: SortKey): string {
  const parts = [
    col(k.column),
    k.descending ? 'DESC' : 'ASC',
    k.nullsFirst ? 'NULLS FIRST' : 'NULLS LAST',
  ];
  if (!k.bytewiseText) parts.push('(text not bytewise)');
  return parts.join(' ');
}

function limitText(v: LimitValue | undefined): string {
  if (v === undefined) return '-';
  return v.kind === 'const' ? v.value : `$${v.index + 1}`;
}

function columnText(c: FinalColumn): string {
  if (c.kind === 'value') return `value(${col(c.input)})`;
  if (c.kind === 'computed') return 'computed';
  return `${c.fn}(${c.inputs.map(col).join(', ')}) AS ${JSON.stringify(c.name)}`;
}

function operand(o: Operand): string {
  if (o.kind === 'column') return col(o.index);
  if (o.text === null) return 'NULL';
  return o.literal === 'string' ? `'${o.text.replaceAll("'", "''")}'` : o.text;
}

export function predicateText(p: Predicate): string {
  switch (p.kind) {
    case 'and':
    case 'or':
      return `(${p.args.map(predicateText).join(` ${p.kind.toUpperCase()} `)})`;
    case 'not':
      return `NOT ${predicateText(p.arg)}`;
    case 'compare':
      return `${operand(p.left)} ${p.op} ${operand(p.right)}`;
    case 'is_null':
      return `${operand(p.arg)} IS ${p.negated ? 'NOT ' : ''}NULL`;
    case 'operand':
      return operand(p.arg);
    default:
      return assertNever(p);
  }
}

function lines(node: PlanNode, depth: number, out: string[]): void {
  const pad = '  '.repeat(depth);
  switch (node.kind) {
    case 'scatter':
      out.push(
        `${pad}Scatter columns=${node.columnCount ?? '*'} params=[${node.params.map((p) => `$${p + 1}`).join(', ')}]`,
      );
      out.push(`${pad}  sql: ${node.sql}`);
      return;
    case 'merge_sort':
      out.push(`${pad}MergeSort keys=[${node.keys.map(key).join(', ')}]`);
      return lines(node.input, depth + 1, out);
    case 'aggregate':
      out.push(
        `${pad}FinalAggregate groupKeys=[${node.groupKeys.map(col).join(', ')}]${node.implicitGroup ? ' implicitGroup' : ''}`,
      );
      out.push(`${pad}  columns: ${node.columns.map(columnText).join(', ')}`);
      return lines(node.input, depth + 1, out);
    case 'compute':
      out.push(
        `${pad}Compute columns=[${node.columns.map((c) => (c.kind === 'input' ? col(c.index) : `${exprText(c.expr, col)} AS ${JSON.stringify(c.name)}`)).join(', ')}]`,
      );
      return lines(node.input, depth + 1, out);
    case 'count_rows':
      out.push(
        `${pad}${node.exists === undefined ? 'CountRows' : node.exists === 'exists' ? 'Exists' : 'NotExists'} AS ${JSON.stringify(node.name)}`,
      );
      return lines(node.input, depth + 1, out);
    case 'filter':
      out.push(`${pad}Filter having=${predicateText(node.predicate)}`);
      return lines(node.input, depth + 1, out);
    case 'sort':
      out.push(`${pad}Sort keys=[${node.keys.map(key).join(', ')}]`);
      return lines(node.input, depth + 1, out);
    case 'distinct':
      out.push(`${pad}Distinct`);
      return lines(node.input, depth + 1, out);
    case 'limit':
      out.push(`${pad}Limit count=${limitText(node.count)} offset=${limitText(node.offset)}`);
      return lines(node.input, depth + 1, out);
    case 'project':
      out.push(`${pad}Project dropTrailing=${node.dropTrailing}`);
      return lines(node.input, depth + 1, out);
    default:
      return assertNever(node);
  }
}

export function explainPlan(plan: ReadPlanResult): string {
  if (plan.kind === 'refuse') return `Refuse: ${plan.reason}\n`;
  const out: string[] = [];
  if (plan.usesTransactionTime)
    out.push('TransactionTime: bound by the router before the leaves run');
  lines(plan.root, 0, out);
  return out.join('\n') + '\n';
}
