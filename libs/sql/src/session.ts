// Session and transaction control, and the statements that wrap another one: transaction
// commands, SET/RESET/SHOW, PREPARE/EXECUTE/DEALLOCATE, DISCARD, LISTEN/NOTIFY, EXPLAIN, VACUUM.
import type {
  Node,
  TransactionStmt,
  VariableSetStmt,
  ExplainStmt,
  PrepareStmt,
  VacuumStmt,
} from 'libpg-query';
import type {
  DiscardAnalysis,
  ExplainAnalysis,
  MaintenanceAnalysis,
  PrepareAnalysis,
  SetAnalysis,
  TransactionAnalysis,
  TransactionAction,
} from './types.js';
import type { StatementContext } from './context.js';
import { baseOf } from './context.js';
import { collect } from './collect.js';
import type { Collected } from './collect.js';
import { defElemArg, defElems, typeNameText } from './ast.js';
import { explainedText, textAfterKeyword } from './inner.js';
import { scanTokens } from './parser.js';

const TRANSACTION_ACTIONS: Readonly<Record<string, TransactionAction>> = {
  TRANS_STMT_BEGIN: 'begin',
  TRANS_STMT_START: 'begin',
  TRANS_STMT_COMMIT: 'commit',
  TRANS_STMT_ROLLBACK: 'rollback',
  TRANS_STMT_SAVEPOINT: 'savepoint',
  TRANS_STMT_RELEASE: 'release',
  TRANS_STMT_ROLLBACK_TO: 'rollback_to',
  TRANS_STMT_PREPARE: 'prepare_transaction',
  TRANS_STMT_COMMIT_PREPARED: 'commit_prepared',
  TRANS_STMT_ROLLBACK_PREPARED: 'rollback_prepared',
};

function firstKeyword(sql: string): string {
  const plain = /^[a-zA-Z]+/.exec(sql);
  if (plain !== null) return plain[0].toLowerCase();
  const t = scanTokens(sql).find((x) => !x.isComment);
  return (t?.text ?? '').toLowerCase();
}

function empty(): Collected {
  return collect(undefined);
}

function optionBool(v: string | true | undefined): boolean | undefined {
  if (v === undefined) return undefined;
  return v === true || v === '1' || v === 'true' || v === 'on';
}

export function analyzeTransaction(ctx: StatementContext, s: TransactionStmt): TransactionAnalysis {
  const opts = new Map(defElems(s.options).map((d) => [d.name, defElemArg(d.arg)] as const));
  const iso = opts.get('transaction_isolation');
  return {
    kind: 'transaction',
    ...baseOf(ctx, empty()),
    action: TRANSACTION_ACTIONS[s.kind ?? ''] ?? 'begin',
    keyword: firstKeyword(ctx.sql),
    savepoint: s.savepoint_name,
    gid: s.gid,
    chain: s.chain === true,
    isolationLevel: iso === undefined || iso === true ? undefined : iso,
    readOnly: optionBool(opts.get('transaction_read_only')),
    deferrable: optionBool(opts.get('transaction_deferrable')),
  };
}

function setValues(args: readonly Node[] | undefined): string[] {
  const out: string[] = [];
  for (const a of args ?? []) {
    if ('DefElem' in a) {
      const v = defElemArg(a.DefElem.arg);
      out.push(`${a.DefElem.defname ?? ''}=${v === true ? 'true' : v}`);
    } else {
      const v = defElemArg('TypeCast' in a ? a.TypeCast.arg : a);
      out.push(v === true ? '' : v);
    }
  }
  return out;
}

export function analyzeSet(ctx: StatementContext, s: VariableSetStmt): SetAnalysis {
  const action: SetAnalysis['action'] =
    s.kind === 'VAR_SET_DEFAULT'
      ? 'set_default'
      : s.kind === 'VAR_RESET'
        ? 'reset'
        : s.kind === 'VAR_RESET_ALL'
          ? 'reset_all'
          : s.kind === 'VAR_SET_MULTI'
            ? 'set_multi'
            : s.kind === 'VAR_SET_CURRENT'
              ? 'set_current'
              : 'set';
  return {
    kind: 'set',
    ...baseOf(ctx, collect(s.args)),
    action,
    name: s.name?.toLowerCase(),
    isLocal: s.is_local === true,
    values: setValues(s.args),
    replay: ctx.sql,
  };
}

export function analyzeSetConstraints(ctx: StatementContext): SetAnalysis {
  return {
    kind: 'set',
    ...baseOf(ctx, empty()),
    action: 'set_constraints',
    name: 'constraints',
    isLocal: true,
    values: [],
    replay: ctx.sql,
  };
}

export function analyzeExplain(ctx: StatementContext, node: Node, s: ExplainStmt): ExplainAnalysis {
  const options = defElems(s.options).map((d) => d.name.toLowerCase());
  const analyzeOpt = defElems(s.options).find((d) => d.name === 'analyze');
  const inner = explainedText(ctx.sql);
  const innerAnalysis = ctx.analyzeInner(
    s.query ?? { SelectStmt: {} },
    inner.sql,
    ctx.location + inner.offset,
  );
  return {
    kind: 'explain',
    ...baseOf(ctx, collect(node)),
    tables: innerAnalysis.tables,
    analyze: analyzeOpt !== undefined && optionBool(defElemArg(analyzeOpt.arg)) === true,
    options,
    inner: innerAnalysis,
  };
}

export function analyzePrepare(ctx: StatementContext, node: Node, s: PrepareStmt): PrepareAnalysis {
  const inner = textAfterKeyword(ctx.sql, 'as');
  const innerAnalysis = ctx.analyzeInner(
    s.query ?? { SelectStmt: {} },
    inner.sql,
    ctx.location + inner.offset,
  );
  return {
    kind: 'prepare',
    ...baseOf(ctx, collect(node)),
    tables: innerAnalysis.tables,
    name: s.name ?? '',
    paramTypes: (s.argtypes ?? []).map((t) => ('TypeName' in t ? typeNameText(t.TypeName) : '')),
    inner: innerAnalysis,
  };
}

export function analyzeDiscard(ctx: StatementContext, target: string | undefined): DiscardAnalysis {
  const t = (target ?? 'DISCARD_ALL').replace(/^DISCARD_/, '').toLowerCase();
  return {
    kind: 'discard',
    ...baseOf(ctx, empty()),
    target: t === 'plans' || t === 'sequences' || t === 'temp' ? t : 'all',
  };
}

export function analyzeVacuum(
  ctx: StatementContext,
  node: Node,
  s: VacuumStmt,
): MaintenanceAnalysis {
  const targets = new Set<object>();
  for (const r of s.rels ?? [])
    if ('VacuumRelation' in r && r.VacuumRelation.relation) targets.add(r.VacuumRelation.relation);
  return {
    kind: s.is_vacuumcmd === true ? 'vacuum' : 'analyze',
    ...baseOf(ctx, collect(node, { targets, top: targets })),
    options: defElems(s.options).map((d) => d.name.toLowerCase()),
  };
}
