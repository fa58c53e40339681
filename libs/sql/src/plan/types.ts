// The multi-node read plan: a tree of primitives as plain data (Vitess-style). The planner builds
// it from the SQL text and a catalog seam; @tessera/merge executes it over per-node leaf streams.

/** How the router stores a table (the router adapts its catalog snapshot to this seam). */
export interface PlannerTable {
  readonly kind: 'sharded' | 'reference' | 'global';
  /** Sharded tables: the distribution key column. */
  readonly keyColumn?: string | undefined;
  /** Sharded tables: tables of one keyspace with equal keys live on the same node. */
  readonly keyspace?: string | undefined;
}

/** What the planner needs to know about the database; owned by the planner (STYLE principle 5). */
export interface PlannerCatalog {
  /** The table `schema.name` (schema undefined when unqualified), or undefined when unknown. */
  table(schema: string | undefined, name: string): PlannerTable | undefined;
  /**
   * True when the database collation is C / POSIX / C.UTF-8, so text orders by its bytes. When
   * false, the executor refuses to order or min/max text-like values across nodes.
   */
  readonly textCollationIsBytewise: boolean;
}

/**
 * A column of a row flowing between primitives. `>= 0` counts from the start; `< 0` counts from
 * the end (`-1` is the last column), used when a `*` before it makes its absolute place unknown.
 */
export type ColumnIndex = number;

export interface SortKey {
  readonly column: ColumnIndex;
  readonly descending: boolean;
  readonly nullsFirst: boolean;
  /** Text-like values of this key may be ordered bytewise (database collation, or COLLATE "C"). */
  readonly bytewiseText: boolean;
}

/** A LIMIT or OFFSET: a constant (decimal text of an integer) or a bind parameter (0-based). */
export type LimitValue =
  | { readonly kind: 'const'; readonly value: string }
  | { readonly kind: 'param'; readonly index: number };

export type AggregateFn =
  'count' | 'sum' | 'min' | 'max' | 'avg' | 'bool_and' | 'bool_or' | 'count_distinct';

/**
 * One output column of FinalAggregate. `value`: a leaf column that is equal in every leaf row of a
 * group (a group key, or an expression of group keys); its field comes from the leaf. `aggregate`:
 * merged from partial columns (`inputs`, leaf indexes; avg has [sum, count]).
 */
export type FinalColumn =
  | { readonly kind: 'value'; readonly input: number }
  /** Filled by the Compute above (an expression over this row's aggregates); NULL until then. */
  | { readonly kind: 'computed' }
  | {
      readonly kind: 'aggregate';
      readonly fn: AggregateFn;
      readonly inputs: readonly number[];
      /** The column name Postgres gives it: the alias, or the function name as written. */
      readonly name: string;
    };

export type CompareOp = '=' | '<>' | '<' | '<=' | '>' | '>=';

export type Operand =
  | { readonly kind: 'column'; readonly index: number }
  | {
      readonly kind: 'const';
      readonly text: string | null;
      readonly literal: 'integer' | 'numeric' | 'string' | 'boolean' | 'null';
    };

/** A HAVING condition over final aggregate rows, SQL three-valued logic. */
export type Predicate =
  | { readonly kind: 'and' | 'or'; readonly args: readonly Predicate[] }
  | { readonly kind: 'not'; readonly arg: Predicate }
  | {
      readonly kind: 'compare';
      readonly op: CompareOp;
      readonly left: Operand;
      readonly right: Operand;
    }
  | { readonly kind: 'is_null'; readonly negated: boolean; readonly arg: Operand }
  | { readonly kind: 'operand'; readonly arg: Operand };

/** Runs the same leaf SQL on every participating node. */
export interface Scatter {
  readonly kind: 'scatter';
  readonly sql: string;
  /**
   * The leaf's `$1..$k` take these client parameters (0-based indexes): `[0, 1, 2]` passes three
   * through; `[0, 2]` means the client's $2 is used only at the router (LIMIT / OFFSET).
   */
  readonly params: readonly number[];
  /** The number of leaf columns when known (no `*` in the select list). */
  readonly columnCount: number | undefined;
}

/** K-way merge of per-node streams each sorted by `keys`. */
export interface MergeSort {
  readonly kind: 'merge_sort';
  readonly input: Scatter;
  readonly keys: readonly SortKey[];
}

/** Merges per-node partial aggregates into final values, one output row per group. */
export interface FinalAggregate {
  readonly kind: 'aggregate';
  readonly input: Scatter;
  /** Leaf columns that identify a group at the router (empty: one group). */
  readonly groupKeys: readonly number[];
  readonly columns: readonly FinalColumn[];
  /** No GROUP BY: exactly one output row, even when no leaf row arrives. */
  readonly implicitGroup: boolean;
}

/** HAVING at the router. */
export interface Filter {
  readonly kind: 'filter';
  readonly input: PlanNode;
  readonly predicate: Predicate;
}

/** Sorts all input rows at the router (only above FinalAggregate: one row per group). */
export interface Sort {
  readonly kind: 'sort';
  readonly input: PlanNode;
  readonly keys: readonly SortKey[];
}

/** Drops rows equal (per type) to an earlier row on every column. */
export interface Distinct {
  readonly kind: 'distinct';
  readonly input: PlanNode;
}

/** Skips `offset` rows, passes `count`, then stops pulling and closes its input. */
export interface Limit {
  readonly kind: 'limit';
  readonly input: PlanNode;
  readonly count: LimitValue | undefined;
  readonly offset: LimitValue | undefined;
}

/** Drops the trailing hidden columns (sort keys, HAVING inputs) from every row. */
export interface Project {
  readonly kind: 'project';
  readonly input: PlanNode;
  readonly dropTrailing: number;
}

/** The scalar types expressions over aggregates are evaluated in, as Postgres resolves them. */
export type ScalarType = 'int2' | 'int4' | 'int8' | 'numeric' | 'text';

/**
 * An expression over final aggregate rows, evaluated at the router with Postgres's semantics
 * (operator resolution over int2/int4/int8/numeric, integer division, overflow and division-by-zero
 * errors, numeric scales). Anything outside this language is refused at planning.
 */
export type Expr =
  | { readonly kind: 'column'; readonly index: number }
  /** An integer or decimal literal, as written (sign folded in). */
  | { readonly kind: 'const'; readonly text: string; readonly literal: 'integer' | 'numeric' }
  | {
      readonly kind: 'op';
      readonly op: '+' | '-' | '*' | '/' | '%';
      readonly left: Expr;
      readonly right: Expr;
    }
  | { readonly kind: 'negate'; readonly arg: Expr }
  /** `::type`; `typmod` for numeric(p, s) as Postgres stores it ((p << 16 | s) + 4), else -1. */
  | {
      readonly kind: 'cast';
      readonly arg: Expr;
      readonly type: ScalarType;
      readonly typmod: number;
    }
  | { readonly kind: 'coalesce'; readonly args: readonly Expr[] }
  | { readonly kind: 'nullif'; readonly left: Expr; readonly right: Expr }
  | { readonly kind: 'round' | 'trunc'; readonly arg: Expr; readonly digits: Expr | undefined };

export type ComputedColumn =
  | { readonly kind: 'input'; readonly index: number }
  | { readonly kind: 'expr'; readonly expr: Expr; readonly name: string };

/** Evaluates expressions over each input row (one output column per entry of `columns`). */
export interface Compute {
  readonly kind: 'compute';
  readonly input: PlanNode;
  readonly columns: readonly ComputedColumn[];
}

/**
 * `select count(*) from (<query>) s`: one int8 row counting the rows of `input`; with `exists`,
 * `select [not] exists (<query>)`: one bool row, whether `input` has a row (negated for `not`).
 */
export interface CountRows {
  readonly kind: 'count_rows';
  readonly input: PlanNode;
  /** The column name Postgres gives it. */
  readonly name: string;
  readonly exists?: 'exists' | 'not_exists';
}

export type PlanNode =
  | Scatter
  | MergeSort
  | FinalAggregate
  | Compute
  | Filter
  | Sort
  | Distinct
  | Limit
  | Project
  | CountRows;

/**
 * What the caller can run beyond the base plans (the router opts in as it gains the glue). Without
 * options planRead plans exactly what it always did.
 */
export interface PlanOptions {
  /** Expressions over aggregate results (casts, arithmetic, coalesce, nullif, round, trunc). */
  readonly aggregateExpressions?: boolean;
  /**
   * now(), transaction_timestamp(), current_timestamp, current_date, current_time, localtime,
   * localtimestamp: planned with a placeholder the router binds to the transaction's time.
   */
  readonly transactionTime?: boolean;
  /**
   * Subqueries in FROM and CTEs whose rows are node-local (colocated on the key, or pinned), UNION
   * ALL / UNION of such branches: the whole statement runs on each node. And
   * `select count(*) from (<any plannable read>) s`, counted at the router.
   */
  readonly colocatedSubqueries?: boolean;
}

export interface ReadPlan {
  readonly kind: 'plan';
  readonly root: PlanNode;
  /** The SQL every participating node runs (the single Scatter's). */
  readonly leafSql: string;
  /** The client parameters (0-based) the leaf's $1..$k take (the single Scatter's `params`). */
  readonly leafParams: readonly number[];
  /** Copied from the catalog: text comparisons (HAVING, min/max, sorts) may be bytewise. */
  readonly textCollationIsBytewise: boolean;
  /**
   * The leaf SQL holds the transaction-time placeholder (now(), current_date, ...): the router
   * must bindTransactionTime before running it (PlanOptions.transactionTime).
   */
  readonly usesTransactionTime: boolean;
}

/** The router answers SQLSTATE 0A000 with `reason`. */
export interface RefusedPlan {
  readonly kind: 'refuse';
  readonly reason: string;
}

export type ReadPlanResult = ReadPlan | RefusedPlan;
