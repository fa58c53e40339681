// The Analysis contract: everything the router needs to route one statement, as plain, frozen data
// computed from the SQL text alone (no catalog). The router combines it with a catalog snapshot.

/** How a constant was written: decides how the router converts `text` into a key value. */
export type LiteralKind = 'integer' | 'numeric' | 'string' | 'boolean' | 'bitstring' | 'null';

/**
 * A literal constant. `text` is its value (string contents unescaped, numbers as written with the
 * sign folded in, booleans as `true`/`false`), `null` for SQL NULL. `typeName` is the outermost
 * explicit cast (`'..'::uuid`, `CAST(.. AS bigint)`, `bigint '1'`), normalised like Postgres
 * prints it without `pg_catalog.` (`int8`, `uuid`, `text[]`).
 */
export interface ConstValue {
  readonly kind: 'const';
  readonly text: string | null;
  readonly literal: LiteralKind;
  readonly typeName: string | undefined;
}

/** A bind parameter `$n`; `index` is 0-based (`$1` -> 0). `isArray` for `= ANY($n)`. */
export interface ParamValue {
  readonly kind: 'param';
  readonly index: number;
  readonly isArray: boolean;
  readonly typeName: string | undefined;
}

/** A value that can pin a key: a constant or a bind parameter. */
export type PinValue = ConstValue | ParamValue;

/** One item of a VALUES row, an EXECUTE argument, a LIMIT/OFFSET. */
export type RowValue = PinValue | { readonly kind: 'default' } | { readonly kind: 'expr' };

/** A relation named in the statement, one entry per reference (a self-join gives two). */
export interface TableRef {
  readonly schema: string | undefined;
  readonly name: string;
  readonly alias: string | undefined;
  /** `target`: written, created, altered, dropped, locked, copied into; `read`: everything else. */
  readonly role: 'target' | 'read';
  /**
   * `top`: in the statement's own FROM list / join tree / target (the scope pins refer to);
   * `nested`: inside a subquery, CTE body, set-operation branch, or other inner query.
   */
  readonly scope: 'top' | 'nested';
  /** `ONLY t`: inheritance children excluded. */
  readonly only: boolean;
}

/** A column of a top-scope FROM item, as written (`t.col` -> table `t`). */
export interface ColumnAt {
  /** The alias (or name when unaliased) of the FROM item; undefined when ambiguous. */
  readonly table: string | undefined;
  /** Index into `Analysis.tables`; undefined when ambiguous or the item is not a relation. */
  readonly tableIndex: number | undefined;
  readonly column: string;
}

/**
 * `column = v`, `v = column`, `column IN (v, ...)`, `column = ANY(v)` found in the top-level AND of
 * WHERE or of an inner join's ON. Rows that reach the result satisfy: column equals one of `values`.
 * Several pins on the same column are ANDed (intersect their values).
 */
export interface KeyPin extends ColumnAt {
  readonly values: readonly PinValue[];
  /** An unqualified column while several FROM items are in scope. */
  readonly ambiguous: boolean;
  /** Every value is a NULL constant (`col = NULL`): the condition matches no row. */
  readonly matchesNothing: boolean;
  readonly source: 'where' | 'on';
}

/** `a.x = b.y` between two different FROM items (WHERE top-level AND, JOIN ON, JOIN USING). */
export interface ColumnEquality {
  readonly left: ColumnAt;
  readonly right: ColumnAt;
  readonly via: 'where' | 'on' | 'using';
  /** The join the condition belongs to; `inner` for WHERE and comma joins. */
  readonly joinType: 'inner' | 'left' | 'right' | 'full';
}

/** Facts from the statement's WHERE and join tree. */
export interface WhereFacts {
  readonly hasWhere: boolean;
  readonly pins: readonly KeyPin[];
  readonly joinEqualities: readonly ColumnEquality[];
  /** An OR or NOT at the top level of WHERE / inner ON: conditions there pin nothing. */
  readonly hasOr: boolean;
  /** A NATURAL join: its equalities are unknown without the catalog. */
  readonly hasNaturalJoin: boolean;
  /** `WHERE CURRENT OF cursor` (UPDATE/DELETE). */
  readonly isCurrentOf: boolean;
}

/** Shape of the top query level of a SELECT (what multi-node merging needs to know). */
export interface SelectShape {
  readonly hasSetOperations: boolean;
  readonly hasDistinct: boolean;
  readonly hasDistinctOn: boolean;
  readonly hasLocking: boolean;
  readonly hasWindowFunctions: boolean;
  /** Aggregate functions called at the top level (not in subqueries, not as window calls). */
  readonly aggregates: readonly string[];
  readonly hasGroupBy: boolean;
  readonly hasHaving: boolean;
  readonly hasOrderBy: boolean;
  /** LIMIT / FETCH FIRST; undefined when absent or `LIMIT ALL`. */
  readonly limit: RowValue | undefined;
  readonly offset: RowValue | undefined;
  /** A bare `VALUES (...)` statement. */
  readonly isValues: boolean;
  /** SELECT without FROM (e.g. `select 1`, `select now()`). */
  readonly hasFrom: boolean;
}

export interface AnalysisBase {
  /**
   * This statement's text: a slice of the input from its first token (leading comments are not
   * included) to its end, without trailing whitespace or `;`.
   */
  readonly sql: string;
  /** Offset of `sql` in the input string (UTF-16 code units). */
  readonly location: number;
  readonly tables: readonly TableRef[];
  /** Highest `$n` used anywhere (0 when none). */
  readonly paramCount: number;
  /** Every function called anywhere, as written (`now`, `pg_catalog.lower`), first use first. */
  readonly functions: readonly string[];
  /** One of `functions` is volatile (random, nextval, clock_timestamp, gen_random_uuid, ...). */
  readonly hasVolatileFunctions: boolean;
  readonly hasSubqueries: boolean;
  readonly hasCtes: boolean;
  /** A CTE that is INSERT/UPDATE/DELETE/MERGE: the statement writes even if it is a SELECT. */
  readonly hasDataModifyingCtes: boolean;
}

export interface SelectAnalysis extends AnalysisBase {
  readonly kind: 'select';
  readonly where: WhereFacts;
  readonly shape: SelectShape;
}

export interface OnConflict {
  readonly action: 'nothing' | 'update';
  /** Inference columns `ON CONFLICT (a, b)`. */
  readonly columns: readonly string[];
  readonly constraint: string | undefined;
  /** Columns assigned by `DO UPDATE SET`. */
  readonly updateColumns: readonly string[];
}

/** A span of `sql` in UTF-16 code units, end exclusive. */
export interface TextSpan {
  readonly start: number;
  readonly end: number;
}

export interface ParamSpan extends TextSpan {
  readonly index: number;
}

export interface InsertAnalysis extends AnalysisBase {
  readonly kind: 'insert';
  readonly targetIndex: number;
  /** Explicit column list; undefined when absent (positions follow the table's column order). */
  readonly columns: readonly string[] | undefined;
  /** `values`: a plain VALUES list (rows known); `select`: anything else; `default_values`. */
  readonly source: 'values' | 'select' | 'default_values';
  /** Per VALUES row, per position. Undefined unless source is `values`. */
  readonly rows: readonly (readonly RowValue[])[] | undefined;
  /** Exact source text of each VALUES row, `(...)` included. */
  readonly rowSlices: readonly string[] | undefined;
  /** Where each row sits in `sql`, and the whole comma-separated row list (for rebuildInsert). */
  readonly rowSpans: readonly TextSpan[] | undefined;
  readonly valuesSpan: TextSpan | undefined;
  /** Every `$n` token in `sql` (index 0-based), for renumbering parameters of a rebuilt INSERT. */
  readonly paramSpans: readonly ParamSpan[] | undefined;
  readonly fromSelect: boolean;
  /** For INSERT ... SELECT: facts of the source query. */
  readonly select: { readonly where: WhereFacts; readonly shape: SelectShape } | undefined;
  readonly onConflict: OnConflict | undefined;
  readonly hasReturning: boolean;
  readonly overriding: 'system' | 'user' | undefined;
}

export interface UpdateAnalysis extends AnalysisBase {
  readonly kind: 'update';
  readonly targetIndex: number;
  readonly setColumns: readonly string[];
  readonly where: WhereFacts;
  readonly hasFrom: boolean;
  readonly hasReturning: boolean;
}

export interface DeleteAnalysis extends AnalysisBase {
  readonly kind: 'delete';
  readonly targetIndex: number;
  readonly where: WhereFacts;
  readonly hasUsing: boolean;
  readonly hasReturning: boolean;
}

export interface CopyOptions {
  readonly format: 'text' | 'csv' | 'binary';
  /** Effective values, defaults filled in (text: tab and `\N`; csv: `,`, empty string, `"`). */
  readonly delimiter: string;
  readonly null: string;
  readonly header: boolean | 'match';
  readonly quote: string;
  readonly escape: string;
  readonly encoding: string | undefined;
  readonly freeze: boolean;
  readonly forceQuote: readonly string[] | '*' | undefined;
  readonly forceNotNull: readonly string[] | '*' | undefined;
  readonly forceNull: readonly string[] | '*' | undefined;
  readonly defaultString: string | undefined;
  readonly onError: string | undefined;
  /** Every option as written (name -> text), for anything not decoded above. */
  readonly raw: Readonly<Record<string, string | true>>;
}

export interface CopyFromAnalysis extends AnalysisBase {
  readonly kind: 'copy_from';
  readonly targetIndex: number;
  readonly columns: readonly string[] | undefined;
  readonly source: 'stdin' | 'file' | 'program';
  readonly filename: string | undefined;
  readonly options: CopyOptions;
  /** `COPY ... FROM ... WHERE cond`. */
  readonly hasWhere: boolean;
}

export interface CopyToAnalysis extends AnalysisBase {
  readonly kind: 'copy_to';
  /** Index of the copied table; undefined for `COPY (query) TO`. */
  readonly tableIndex: number | undefined;
  readonly columns: readonly string[] | undefined;
  /** `COPY (query) TO`: the query's own analysis. */
  readonly query: Analysis | undefined;
  readonly destination: 'stdout' | 'file' | 'program';
  readonly filename: string | undefined;
  readonly options: CopyOptions;
}

export type DdlCommand =
  | 'create_table'
  | 'create_table_as'
  | 'create_materialized_view'
  | 'refresh_materialized_view'
  | 'alter_table'
  | 'truncate'
  | 'create_index'
  | 'reindex'
  | 'create_schema'
  | 'create_type'
  | 'alter_type'
  | 'create_domain'
  | 'create_extension'
  | 'alter_extension'
  | 'create_view'
  | 'create_sequence'
  | 'alter_sequence'
  | 'create_function'
  | 'alter_function'
  | 'create_trigger'
  | 'create_policy'
  | 'alter_policy'
  | 'create_rule'
  | 'create_statistics'
  | 'define'
  | 'rename'
  | 'alter_object_schema'
  | 'alter_owner'
  | 'comment'
  | 'grant'
  | 'revoke'
  | 'grant_role'
  | 'revoke_role'
  | 'alter_default_privileges'
  | 'create_role'
  | 'alter_role'
  | 'drop_role'
  | 'create_database'
  | 'drop_database'
  | 'alter_database'
  | 'create_publication'
  | 'alter_publication'
  | 'create_subscription'
  | 'alter_subscription'
  | 'drop_subscription'
  | 'create_cast'
  | 'create_tablespace'
  | 'drop_tablespace'
  | 'security_label'
  | 'drop_owned'
  | 'reassign_owned'
  | 'cluster'
  /** DROP of any object type: `drop_table`, `drop_index`, `drop_view`, `drop_schema`, `drop_type`, ... */
  | `drop_${string}`;

export interface DdlObject {
  /** Lower-case object type: table, index, view, schema, type, sequence, function, extension, ... */
  readonly type: string;
  readonly schema: string | undefined;
  readonly name: string;
}

export interface ColumnDefinition {
  readonly name: string;
  /** Type as text, `pg_catalog.` dropped: `int8`, `text`, `varchar(20)`, `numeric(10,2)`, `uuid[]`. */
  readonly type: string;
  readonly notNull: boolean;
  readonly hasDefault: boolean;
  readonly isIdentity: boolean;
  readonly isGenerated: boolean;
}

export interface ConstraintDefinition {
  readonly type: 'primary_key' | 'unique' | 'foreign_key' | 'check' | 'exclusion';
  readonly name: string | undefined;
  /** Constrained columns (for a column constraint: that column). Empty for CHECK. */
  readonly columns: readonly string[];
  readonly references:
    | {
        readonly schema: string | undefined;
        readonly name: string;
        readonly columns: readonly string[];
      }
    | undefined;
}

export interface CreateTableInfo {
  readonly schema: string | undefined;
  readonly name: string;
  readonly columns: readonly ColumnDefinition[];
  readonly constraints: readonly ConstraintDefinition[];
  readonly hasConstraints: boolean;
  readonly ifNotExists: boolean;
  readonly temporary: boolean;
  readonly unlogged: boolean;
  readonly partitionOf: { readonly schema: string | undefined; readonly name: string } | undefined;
  readonly isPartitioned: boolean;
  readonly inherits: readonly { readonly schema: string | undefined; readonly name: string }[];
  /** `LIKE other` appears: the column list is incomplete without the catalog. */
  readonly hasLike: boolean;
}

export interface DdlAnalysis extends AnalysisBase {
  readonly kind: 'ddl';
  readonly command: DdlCommand;
  readonly objects: readonly DdlObject[];
  readonly ifExists: boolean;
  readonly ifNotExists: boolean;
  readonly cascade: boolean;
  /** CREATE TABLE only. */
  readonly createTable: CreateTableInfo | undefined;
  /** CREATE TABLE AS / SELECT INTO / CREATE MATERIALIZED VIEW / CREATE VIEW: the query. */
  readonly query: Analysis | undefined;
  /**
   * The column lists of every uniqueness this statement makes its table enforce: CREATE TABLE's
   * PRIMARY KEY, UNIQUE and EXCLUDE constraints, CREATE UNIQUE INDEX, ALTER TABLE ... ADD of one.
   * `null` stands for an expression or what the statement does not name (USING INDEX, EXCLUDE).
   */
  readonly uniqueKeys: readonly (readonly (string | null)[])[];
}

export type TransactionAction =
  | 'begin'
  | 'commit'
  | 'rollback'
  | 'savepoint'
  | 'release'
  | 'rollback_to'
  | 'prepare_transaction'
  | 'commit_prepared'
  | 'rollback_prepared';

export interface TransactionAnalysis extends AnalysisBase {
  readonly kind: 'transaction';
  readonly action: TransactionAction;
  /** The keyword used: BEGIN vs START TRANSACTION, COMMIT vs END, ROLLBACK vs ABORT (lower-case). */
  readonly keyword: string;
  readonly savepoint: string | undefined;
  readonly gid: string | undefined;
  /** COMMIT/ROLLBACK AND CHAIN. */
  readonly chain: boolean;
  readonly isolationLevel: string | undefined;
  readonly readOnly: boolean | undefined;
  readonly deferrable: boolean | undefined;
}

export interface SetAnalysis extends AnalysisBase {
  readonly kind: 'set';
  /**
   * `set` (SET name TO value), `set_default` (SET name TO DEFAULT), `reset`, `reset_all`,
   * `set_multi` (SET TRANSACTION ..., SET SESSION CHARACTERISTICS ...), `set_current`
   * (SET name FROM CURRENT), `set_constraints` (SET CONSTRAINTS, transaction-scoped).
   */
  readonly action:
    'set' | 'set_default' | 'reset' | 'reset_all' | 'set_multi' | 'set_current' | 'set_constraints';
  /** Setting name, lower-case (`search_path`, `timezone`, `role`, `session_authorization`, `transaction`). */
  readonly name: string | undefined;
  readonly isLocal: boolean;
  /** Values as text (constants' text, identifiers' names). */
  readonly values: readonly string[];
  /** The statement text to replay on another backend (= `sql`). */
  readonly replay: string;
}

export interface ShowAnalysis extends AnalysisBase {
  readonly kind: 'show';
  /** Setting name, `all` for SHOW ALL. */
  readonly name: string;
}

export interface ExplainAnalysis extends AnalysisBase {
  readonly kind: 'explain';
  readonly analyze: boolean;
  /** Option names as given (`analyze`, `verbose`, `costs`, `format`, ...), lower-case. */
  readonly options: readonly string[];
  readonly inner: Analysis;
}

export interface PrepareAnalysis extends AnalysisBase {
  readonly kind: 'prepare';
  readonly name: string;
  readonly paramTypes: readonly string[];
  readonly inner: Analysis;
}

export interface ExecuteAnalysis extends AnalysisBase {
  readonly kind: 'execute';
  readonly name: string;
  readonly params: readonly RowValue[];
}

export interface DeallocateAnalysis extends AnalysisBase {
  readonly kind: 'deallocate';
  /** Undefined for DEALLOCATE ALL. */
  readonly name: string | undefined;
}

export interface DiscardAnalysis extends AnalysisBase {
  readonly kind: 'discard';
  readonly target: 'all' | 'plans' | 'sequences' | 'temp';
}

export interface ListenAnalysis extends AnalysisBase {
  readonly kind: 'listen';
  readonly channel: string;
}

export interface UnlistenAnalysis extends AnalysisBase {
  readonly kind: 'unlisten';
  /** Undefined for UNLISTEN *. */
  readonly channel: string | undefined;
}

export interface NotifyAnalysis extends AnalysisBase {
  readonly kind: 'notify';
  readonly channel: string;
  readonly payload: string | undefined;
}

export interface MaintenanceAnalysis extends AnalysisBase {
  readonly kind: 'vacuum' | 'analyze';
  /** Option names, lower-case (`full`, `verbose`, `analyze`, `freeze`, ...). */
  readonly options: readonly string[];
}

export interface UtilityAnalysis extends AnalysisBase {
  readonly kind: 'utility';
  /**
   * What it is, from the parse node: `lock`, `declare_cursor`, `fetch`, `move`, `close`, `do`,
   * `call`, `check_point`, `load`, `merge`, ... (snake_case of the parse-node name).
   */
  readonly command: string;
  /** For DECLARE CURSOR: the cursor's query. */
  readonly query: Analysis | undefined;
  /** DECLARE, FETCH, MOVE, CLOSE: the cursor named (undefined name: CLOSE ALL). */
  readonly cursor: CursorInfo | undefined;
}

export interface CursorInfo {
  readonly name: string | undefined;
  /** DECLARE ... WITH HOLD: the cursor outlives its transaction. */
  readonly hold: boolean;
  /** DECLARE ... SCROLL (backward fetches allowed). */
  readonly scroll: boolean;
  /** DECLARE BINARY ... (rows in binary format). */
  readonly binary: boolean;
  /** FETCH or MOVE: which way and how many rows. */
  readonly fetch: CursorFetch | undefined;
}

/**
 * FETCH/MOVE as Postgres's FetchStmt has it: `forward` with `count` rows (0: the current row
 * again, negative: backward, `all`), `backward`, `absolute` or `relative` positions.
 */
export interface CursorFetch {
  readonly direction: 'forward' | 'backward' | 'absolute' | 'relative';
  readonly count: number | 'all';
}

export type Analysis =
  | SelectAnalysis
  | InsertAnalysis
  | UpdateAnalysis
  | DeleteAnalysis
  | CopyFromAnalysis
  | CopyToAnalysis
  | DdlAnalysis
  | TransactionAnalysis
  | SetAnalysis
  | ShowAnalysis
  | ExplainAnalysis
  | PrepareAnalysis
  | ExecuteAnalysis
  | DeallocateAnalysis
  | DiscardAnalysis
  | ListenAnalysis
  | UnlistenAnalysis
  | NotifyAnalysis
  | MaintenanceAnalysis
  | UtilityAnalysis;

export type AnalysisKind = Analysis['kind'];
