// analyze(sql) / analyzeAll(sql): parse with the real Postgres grammar and describe each statement
// as plain, deeply frozen data. The dispatch on parse-node kind ends in `utility`, so a statement
// kind this file does not know still lists the tables it names and is refused safely.
import type { Node } from 'libpg-query';
import type { Analysis, CursorFetch, CursorInfo, UtilityAnalysis } from './types.js';
import type { StatementContext } from './context.js';
import { baseOf } from './context.js';
import { collect } from './collect.js';
import { parseStatements } from './parser.js';
import { SqlError, SQLSTATE_SYNTAX_ERROR } from './errors.js';
import { snakeCommand, tagOf } from './ast.js';
import { analyzeDelete, analyzeSelect, analyzeUpdate } from './dml.js';
import { analyzeInsert } from './insert.js';
import { analyzeCopy } from './copy.js';
import { analyzeDdl, analyzeSelectInto, isDdlTag } from './ddl.js';
import {
  analyzeDiscard,
  analyzeExplain,
  analyzePrepare,
  analyzeSet,
  analyzeSetConstraints,
  analyzeTransaction,
  analyzeVacuum,
} from './session.js';
import { textAfterKeyword } from './inner.js';
import { rowValueOf } from './values.js';
import { deepFreeze } from './freeze.js';

function context(sql: string, location: number): StatementContext {
  return {
    sql,
    location,
    analyzeInner: (node, innerSql, innerLocation) => analyzeNode(node, innerSql, innerLocation),
  };
}

function utility(
  ctx: StatementContext,
  node: Node,
  command: string,
  query?: Analysis,
): UtilityAnalysis {
  return { ...utilityBase(ctx, node, command, query), cursor: cursorOf(node) };
}

/** CURSOR_OPT_* of parsenodes.h. */
const CURSOR_OPT_BINARY = 0x0001;
const CURSOR_OPT_SCROLL = 0x0002;
const CURSOR_OPT_HOLD = 0x0020;
/** FETCH ALL: LONG_MAX in Postgres, INT_MAX in the 32-bit WebAssembly parser. */
const FETCH_ALL = 2147483647;

const FETCH_DIRECTIONS = {
  FETCH_FORWARD: 'forward',
  FETCH_BACKWARD: 'backward',
  FETCH_ABSOLUTE: 'absolute',
  FETCH_RELATIVE: 'relative',
} as const;

function cursorOf(node: Node): CursorInfo | undefined {
  const plain = { hold: false, scroll: false, binary: false, fetch: undefined };
  if ('DeclareCursorStmt' in node) {
    const d = node.DeclareCursorStmt;
    const options = d.options ?? 0;
    return {
      name: d.portalname,
      hold: (options & CURSOR_OPT_HOLD) !== 0,
      scroll: (options & CURSOR_OPT_SCROLL) !== 0,
      binary: (options & CURSOR_OPT_BINARY) !== 0,
      fetch: undefined,
    };
  }
  if ('FetchStmt' in node) {
    const f = node.FetchStmt;
    const many = Number(f.howMany ?? 0);
    const fetch: CursorFetch = {
      direction: FETCH_DIRECTIONS[f.direction ?? 'FETCH_FORWARD'],
      count: many >= FETCH_ALL ? 'all' : many,
    };
    return { name: f.portalname, ...plain, fetch };
  }
  if ('ClosePortalStmt' in node) return { name: node.ClosePortalStmt.portalname, ...plain };
  return undefined;
}

function utilityBase(
  ctx: StatementContext,
  node: Node,
  command: string,
  query: Analysis | undefined,
): Omit<UtilityAnalysis, 'cursor'> {
  const targets = new Set<object>();
  if ('LockStmt' in node)
    for (const r of node.LockStmt.relations ?? []) if ('RangeVar' in r) targets.add(r.RangeVar);
  if ('MergeStmt' in node && node.MergeStmt.relation !== undefined)
    targets.add(node.MergeStmt.relation);
  return {
    kind: 'utility',
    ...baseOf(ctx, collect(node, { targets, top: targets })),
    command,
    query,
  };
}

/** Analyses one parse-tree statement whose text is `sql`. */
export function analyzeNode(node: Node, sql: string, location: number): Analysis {
  const ctx = context(sql, location);
  if ('SelectStmt' in node) {
    if (node.SelectStmt.intoClause !== undefined)
      return analyzeSelectInto(ctx, node, node.SelectStmt);
    return analyzeSelect(ctx, node, node.SelectStmt);
  }
  if ('InsertStmt' in node) return analyzeInsert(ctx, node, node.InsertStmt);
  if ('UpdateStmt' in node) return analyzeUpdate(ctx, node, node.UpdateStmt);
  if ('DeleteStmt' in node) return analyzeDelete(ctx, node, node.DeleteStmt);
  if ('CopyStmt' in node) return analyzeCopy(ctx, node, node.CopyStmt);
  if ('TransactionStmt' in node) return analyzeTransaction(ctx, node.TransactionStmt);
  if ('VariableSetStmt' in node) return analyzeSet(ctx, node.VariableSetStmt);
  if ('ConstraintsSetStmt' in node) return analyzeSetConstraints(ctx);
  if ('VariableShowStmt' in node) {
    return {
      kind: 'show',
      ...baseOf(ctx, collect(undefined)),
      name: (node.VariableShowStmt.name ?? '').toLowerCase(),
    };
  }
  if ('ExplainStmt' in node) return analyzeExplain(ctx, node, node.ExplainStmt);
  if ('PrepareStmt' in node) return analyzePrepare(ctx, node, node.PrepareStmt);
  if ('ExecuteStmt' in node) {
    const e = node.ExecuteStmt;
    return {
      kind: 'execute',
      ...baseOf(ctx, collect(node)),
      name: e.name ?? '',
      params: (e.params ?? []).map(rowValueOf),
    };
  }
  if ('DeallocateStmt' in node) {
    const d = node.DeallocateStmt;
    return {
      kind: 'deallocate',
      ...baseOf(ctx, collect(undefined)),
      name: d.isall === true ? undefined : d.name,
    };
  }
  if ('DiscardStmt' in node) return analyzeDiscard(ctx, node.DiscardStmt.target);
  if ('ListenStmt' in node) {
    return {
      kind: 'listen',
      ...baseOf(ctx, collect(undefined)),
      channel: node.ListenStmt.conditionname ?? '',
    };
  }
  if ('UnlistenStmt' in node) {
    return {
      kind: 'unlisten',
      ...baseOf(ctx, collect(undefined)),
      channel: node.UnlistenStmt.conditionname,
    };
  }
  if ('NotifyStmt' in node) {
    const n = node.NotifyStmt;
    return {
      kind: 'notify',
      ...baseOf(ctx, collect(undefined)),
      channel: n.conditionname ?? '',
      payload: n.payload,
    };
  }
  if ('VacuumStmt' in node) return analyzeVacuum(ctx, node, node.VacuumStmt);
  if ('DeclareCursorStmt' in node && node.DeclareCursorStmt.query !== undefined) {
    const inner = textAfterKeyword(sql, 'for');
    const query = analyzeNode(node.DeclareCursorStmt.query, inner.sql, location + inner.offset);
    return utility(ctx, node, 'declare_cursor', query);
  }
  if ('FetchStmt' in node)
    return utility(ctx, node, node.FetchStmt.ismove === true ? 'move' : 'fetch');
  if ('ClosePortalStmt' in node) return utility(ctx, node, 'close');
  const tag = tagOf(node);
  if (isDdlTag(tag)) return analyzeDdl(ctx, node);
  return utility(ctx, node, snakeCommand(tag));
}

/** Every statement of `sql` (a simple-query string may hold several), in order. Frozen. */
export function analyzeAll(sql: string): readonly Analysis[] {
  const out = parseStatements(sql).map((s) => analyzeNode(s.node, s.sql, s.location));
  return deepFreeze(out);
}

/** The one statement of `sql`; SqlError 42601 if there is none or more than one. */
export function analyze(sql: string): Analysis {
  const all = analyzeAll(sql);
  const only = all[0];
  if (all.length !== 1 || only === undefined) {
    throw new SqlError(
      SQLSTATE_SYNTAX_ERROR,
      all.length === 0 ? 'empty statement' : `expected one statement, got ${all.length}`,
    );
  }
  return only;
}
