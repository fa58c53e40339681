// DDL: the command, the objects it creates/changes/drops, and for CREATE TABLE its columns, types
// and constraints (the router creates a table where its catalog kind says, and checks the key).
import type { Node, CreateStmt, DropStmt, RangeVar, SelectStmt } from 'libpg-query';
import type {
  ColumnDefinition,
  ConstraintDefinition,
  CreateTableInfo,
  DdlAnalysis,
  DdlCommand,
  DdlObject,
  TableRef,
} from './types.js';
import type { StatementContext } from './context.js';
import { baseOf } from './context.js';
import { collect } from './collect.js';
import { qualifiedName, rangeVarName, stringList, tagOf, typeNameText } from './ast.js';
import { textAfterKeyword } from './inner.js';

/** Parse-node tag -> DDL command, for statements handled generically. */
const DDL_COMMANDS: Readonly<Record<string, DdlCommand>> = {
  CreateStmt: 'create_table',
  AlterTableStmt: 'alter_table',
  TruncateStmt: 'truncate',
  IndexStmt: 'create_index',
  ReindexStmt: 'reindex',
  CreateSchemaStmt: 'create_schema',
  CreateEnumStmt: 'create_type',
  CompositeTypeStmt: 'create_type',
  CreateRangeStmt: 'create_type',
  AlterEnumStmt: 'alter_type',
  AlterCompositeTypeStmt: 'alter_type',
  CreateDomainStmt: 'create_domain',
  CreateExtensionStmt: 'create_extension',
  AlterExtensionStmt: 'alter_extension',
  AlterExtensionContentsStmt: 'alter_extension',
  ViewStmt: 'create_view',
  CreateSeqStmt: 'create_sequence',
  AlterSeqStmt: 'alter_sequence',
  CreateFunctionStmt: 'create_function',
  AlterFunctionStmt: 'alter_function',
  CreateTrigStmt: 'create_trigger',
  CreatePolicyStmt: 'create_policy',
  AlterPolicyStmt: 'alter_policy',
  RuleStmt: 'create_rule',
  CreateStatsStmt: 'create_statistics',
  DefineStmt: 'define',
  RenameStmt: 'rename',
  AlterObjectSchemaStmt: 'alter_object_schema',
  AlterOwnerStmt: 'alter_owner',
  CommentStmt: 'comment',
  GrantRoleStmt: 'grant_role',
  AlterDefaultPrivilegesStmt: 'alter_default_privileges',
  CreateRoleStmt: 'create_role',
  AlterRoleStmt: 'alter_role',
  AlterRoleSetStmt: 'alter_role',
  DropRoleStmt: 'drop_role',
  CreatedbStmt: 'create_database',
  DropdbStmt: 'drop_database',
  AlterDatabaseStmt: 'alter_database',
  AlterDatabaseSetStmt: 'alter_database',
  CreatePublicationStmt: 'create_publication',
  AlterPublicationStmt: 'alter_publication',
  CreateSubscriptionStmt: 'create_subscription',
  AlterSubscriptionStmt: 'alter_subscription',
  DropSubscriptionStmt: 'drop_subscription',
  CreateCastStmt: 'create_cast',
  CreateTableSpaceStmt: 'create_tablespace',
  DropTableSpaceStmt: 'drop_tablespace',
  SecLabelStmt: 'security_label',
  DropOwnedStmt: 'drop_owned',
  ReassignOwnedStmt: 'reassign_owned',
  ClusterStmt: 'cluster',
  RefreshMatViewStmt: 'refresh_materialized_view',
  CreateTableAsStmt: 'create_table_as',
  GrantStmt: 'grant',
  DropStmt: 'drop_object',
};

const TABLE_LIKE = new Set(['table', 'view', 'matview', 'foreign_table', 'sequence', 'column']);

export function isDdlTag(tag: string): boolean {
  return tag in DDL_COMMANDS;
}

function objectType(objtype: string | undefined): string {
  return (objtype ?? 'OBJECT_TABLE').replace(/^OBJECT_/, '').toLowerCase();
}

function rangeVarObject(type: string, rv: RangeVar): DdlObject {
  return { type, ...rangeVarName(rv) };
}

/** A DROP/COMMENT object: qualified-name list, name, type name, or function signature. */
function namedObject(type: string, node: Node): DdlObject | undefined {
  if ('List' in node) {
    const parts = stringList(node.List.items);
    // A column is [schema.]table.column: the object is the table.
    const q = qualifiedName(type === 'column' ? parts.slice(0, -1) : parts);
    return { type, ...q };
  }
  if ('String' in node) return { type, schema: undefined, name: node.String.sval ?? '' };
  if ('TypeName' in node) {
    const q = qualifiedName(stringList(node.TypeName.names));
    return { type, ...q };
  }
  if ('ObjectWithArgs' in node)
    return { type, ...qualifiedName(stringList(node.ObjectWithArgs.objname)) };
  return undefined;
}

function constraintOf(node: Node, column: string | undefined): ConstraintDefinition | undefined {
  if (!('Constraint' in node)) return undefined;
  const k = node.Constraint;
  const own = column === undefined ? [] : [column];
  switch (k.contype) {
    case 'CONSTR_PRIMARY':
      return {
        type: 'primary_key',
        name: k.conname,
        columns: column === undefined ? stringList(k.keys) : own,
        references: undefined,
      };
    case 'CONSTR_UNIQUE':
      return {
        type: 'unique',
        name: k.conname,
        columns: column === undefined ? stringList(k.keys) : own,
        references: undefined,
      };
    case 'CONSTR_FOREIGN':
      return {
        type: 'foreign_key',
        name: k.conname,
        columns: column === undefined ? stringList(k.fk_attrs) : own,
        references:
          k.pktable === undefined
            ? undefined
            : { ...rangeVarName(k.pktable), columns: stringList(k.pk_attrs) },
      };
    case 'CONSTR_CHECK':
      return { type: 'check', name: k.conname, columns: [], references: undefined };
    case 'CONSTR_EXCLUSION':
      return { type: 'exclusion', name: k.conname, columns: [], references: undefined };
    default:
      return undefined;
  }
}

function createTableInfo(s: CreateStmt): CreateTableInfo {
  const columns: ColumnDefinition[] = [];
  const constraints: ConstraintDefinition[] = [];
  let hasLike = false;
  for (const el of s.tableElts ?? []) {
    if ('ColumnDef' in el) {
      const d = el.ColumnDef;
      const name = d.colname ?? '';
      const type = typeNameText(d.typeName);
      let notNull = d.is_not_null === true;
      let hasDefault = d.raw_default !== undefined || /^(small|big)?serial[248]?$/.test(type);
      let isIdentity = false;
      let isGenerated = false;
      for (const cn of d.constraints ?? []) {
        if (!('Constraint' in cn)) continue;
        const ct = cn.Constraint.contype;
        if (ct === 'CONSTR_NOTNULL' || ct === 'CONSTR_PRIMARY') notNull = true;
        if (ct === 'CONSTR_DEFAULT') hasDefault = true;
        if (ct === 'CONSTR_IDENTITY') isIdentity = true;
        if (ct === 'CONSTR_GENERATED') isGenerated = true;
        const def = constraintOf(cn, name);
        if (def !== undefined) constraints.push(def);
      }
      columns.push({ name, type, notNull, hasDefault, isIdentity, isGenerated });
    } else if ('TableLikeClause' in el) hasLike = true;
    else {
      const def = constraintOf(el, undefined);
      if (def !== undefined) constraints.push(def);
    }
  }
  const rel = s.relation;
  const parents = (s.inhRelations ?? []).flatMap((n) =>
    'RangeVar' in n ? [rangeVarName(n.RangeVar)] : [],
  );
  return {
    schema: rel?.schemaname,
    name: rel?.relname ?? '',
    columns,
    constraints,
    hasConstraints: constraints.length > 0,
    ifNotExists: s.if_not_exists === true,
    temporary: rel?.relpersistence === 't',
    unlogged: rel?.relpersistence === 'u',
    partitionOf: s.partbound !== undefined ? parents[0] : undefined,
    isPartitioned: s.partspec !== undefined,
    inherits: s.partbound !== undefined ? [] : parents,
    hasLike,
  };
}

/** RangeVars a DDL statement acts on (vs. reads): the usual top-level fields. */
function targetRangeVars(body: Record<string, unknown>): RangeVar[] {
  const out: RangeVar[] = [];
  for (const key of ['relation', 'view', 'sequence']) {
    const v = body[key];
    if (v !== undefined && v !== null && typeof v === 'object') out.push(v as RangeVar);
  }
  const into = body['into'] as { rel?: RangeVar } | undefined;
  if (into?.rel !== undefined) out.push(into.rel);
  for (const key of ['relations', 'objects']) {
    const list = body[key];
    if (Array.isArray(list))
      for (const n of list as Node[]) if ('RangeVar' in n) out.push(n.RangeVar);
  }
  return out;
}

interface DdlExtras {
  ifExists?: boolean;
  ifNotExists?: boolean;
  cascade?: boolean;
  createTable?: CreateTableInfo;
  uniqueKeys?: (string | null)[][];
  query?: DdlAnalysis['query'];
}

/** `SELECT ... INTO t` is CREATE TABLE AS. */
export function analyzeSelectInto(ctx: StatementContext, node: Node, s: SelectStmt): DdlAnalysis {
  const rel = s.intoClause?.rel;
  const c = collect(node, { top: new Set(rel ? [rel] : []), targets: new Set(rel ? [rel] : []) });
  const query = ctx.analyzeInner(
    { SelectStmt: { ...s, intoClause: undefined } },
    ctx.sql,
    ctx.location,
  );
  return ddl(ctx, c, 'create_table_as', rel ? [rangeVarObject('table', rel)] : [], { query });
}

function ddl(
  ctx: StatementContext,
  c: ReturnType<typeof collect>,
  command: DdlCommand,
  objects: DdlObject[],
  more: DdlExtras = {},
): DdlAnalysis {
  return {
    kind: 'ddl',
    ...baseOf(ctx, c),
    command,
    objects,
    ifExists: more.ifExists ?? false,
    ifNotExists: more.ifNotExists ?? false,
    cascade: more.cascade ?? false,
    createTable: more.createTable,
    query: more.query,
    uniqueKeys: more.uniqueKeys ?? [],
  };
}

/** Columns of a constraint that enforces uniqueness (null: not known from the statement). */
function uniqueOf(node: Node, column: string | undefined): (string | null)[] | undefined {
  if (!('Constraint' in node)) return undefined;
  const k = node.Constraint;
  if (k.contype === 'CONSTR_EXCLUSION') return [null];
  if (k.contype !== 'CONSTR_PRIMARY' && k.contype !== 'CONSTR_UNIQUE') return undefined;
  if (column !== undefined) return [column];
  return k.indexname !== undefined ? [null] : stringList(k.keys);
}

/** uniqueKeys of CREATE TABLE, CREATE UNIQUE INDEX and ALTER TABLE (DdlAnalysis.uniqueKeys). */
function uniqueKeysOf(node: Node): (string | null)[][] {
  const out: (string | null)[][] = [];
  const add = (u: (string | null)[] | undefined): void => void (u !== undefined && out.push(u));
  if ('CreateStmt' in node)
    for (const el of node.CreateStmt.tableElts ?? []) {
      if (!('ColumnDef' in el)) add(uniqueOf(el, undefined));
      else for (const cn of el.ColumnDef.constraints ?? []) add(uniqueOf(cn, el.ColumnDef.colname));
    }
  if ('IndexStmt' in node && node.IndexStmt.unique === true)
    add(
      (node.IndexStmt.indexParams ?? []).map((p) =>
        'IndexElem' in p ? (p.IndexElem.name ?? null) : null,
      ),
    );
  if ('AlterTableStmt' in node)
    for (const cmd of node.AlterTableStmt.cmds ?? []) {
      const at = 'AlterTableCmd' in cmd ? cmd.AlterTableCmd : undefined;
      if (at?.def === undefined) continue;
      if (at.subtype === 'AT_AddConstraint') add(uniqueOf(at.def, undefined));
      if (at.subtype === 'AT_AddColumn' && 'ColumnDef' in at.def)
        for (const cn of at.def.ColumnDef.constraints ?? [])
          add(uniqueOf(cn, at.def.ColumnDef.colname));
    }
  return out;
}

export function analyzeDdl(ctx: StatementContext, node: Node): DdlAnalysis {
  const tag = tagOf(node);
  const body = (node as unknown as Record<string, Record<string, unknown>>)[tag] ?? {};
  let command = DDL_COMMANDS[tag] ?? 'define';
  const skip = new Set<object>();
  if ('CompositeTypeStmt' in node && node.CompositeTypeStmt.typevar !== undefined)
    skip.add(node.CompositeTypeStmt.typevar);
  const targets = targetRangeVars(body);
  const c = collect(node, { top: new Set(targets), targets: new Set(targets), skip });
  const type = objectType(
    (body['objtype'] as string | undefined) ??
      (body['removeType'] as string | undefined) ??
      (body['renameType'] as string | undefined),
  );
  const relType =
    tag === 'IndexStmt' ||
    tag === 'CreateTrigStmt' ||
    tag === 'CreatePolicyStmt' ||
    type === 'column'
      ? 'table'
      : type;
  const objects: DdlObject[] = targets.map((rv) => rangeVarObject(relType, rv));
  const more: DdlExtras = {
    uniqueKeys: uniqueKeysOf(node),
    ifExists: body['missing_ok'] === true,
    ifNotExists: body['if_not_exists'] === true,
    cascade: body['behavior'] === 'DROP_CASCADE',
  };

  const addTable = (o: DdlObject): void => {
    c.tables.push({
      schema: o.schema,
      name: o.name,
      alias: undefined,
      role: 'target',
      scope: 'top',
      only: false,
    } satisfies TableRef);
  };

  if ('CreateStmt' in node) {
    more.createTable = createTableInfo(node.CreateStmt);
  } else if ('DropStmt' in node) {
    const d: DropStmt = node.DropStmt;
    command = `drop_${type}`;
    for (const o of d.objects ?? []) {
      const obj = namedObject(type, o);
      if (obj === undefined) continue;
      objects.push(obj);
      if (TABLE_LIKE.has(type)) addTable(obj);
    }
  } else if ('CommentStmt' in node && node.CommentStmt.object !== undefined) {
    const obj = namedObject(type, node.CommentStmt.object);
    if (obj !== undefined) {
      objects.push(obj);
      if (TABLE_LIKE.has(type)) addTable(obj);
    }
  } else if ('IndexStmt' in node) {
    const idx = node.IndexStmt;
    if (idx.idxname !== undefined)
      objects.unshift({ type: 'index', schema: idx.relation?.schemaname, name: idx.idxname });
  } else if ('GrantStmt' in node) {
    command = node.GrantStmt.is_grant === true ? 'grant' : 'revoke';
  } else if ('GrantRoleStmt' in node) {
    command = node.GrantRoleStmt.is_grant === true ? 'grant_role' : 'revoke_role';
  } else if ('CreateTableAsStmt' in node) {
    const s = node.CreateTableAsStmt;
    if (s.objtype === 'OBJECT_MATVIEW') command = 'create_materialized_view';
    if (s.query !== undefined) {
      const inner = textAfterKeyword(ctx.sql, 'as');
      more.query = ctx.analyzeInner(s.query, inner.sql, ctx.location + inner.offset);
    }
  } else if ('ViewStmt' in node && node.ViewStmt.query !== undefined) {
    const inner = textAfterKeyword(ctx.sql, 'as');
    more.query = ctx.analyzeInner(node.ViewStmt.query, inner.sql, ctx.location + inner.offset);
  } else if ('CreateSchemaStmt' in node) {
    objects.push({
      type: 'schema',
      schema: undefined,
      name: node.CreateSchemaStmt.schemaname ?? '',
    });
  } else if ('CreateEnumStmt' in node || 'CreateRangeStmt' in node || 'CreateDomainStmt' in node) {
    const names =
      'CreateEnumStmt' in node
        ? node.CreateEnumStmt.typeName
        : 'CreateRangeStmt' in node
          ? node.CreateRangeStmt.typeName
          : node.CreateDomainStmt.domainname;
    objects.push({
      type: 'CreateDomainStmt' in node ? 'domain' : 'type',
      ...qualifiedName(stringList(names)),
    });
  } else if ('CompositeTypeStmt' in node && node.CompositeTypeStmt.typevar !== undefined) {
    objects.push(rangeVarObject('type', node.CompositeTypeStmt.typevar));
  } else if ('CreateExtensionStmt' in node) {
    objects.push({
      type: 'extension',
      schema: undefined,
      name: node.CreateExtensionStmt.extname ?? '',
    });
  } else if ('CreateFunctionStmt' in node) {
    objects.push({
      type: node.CreateFunctionStmt.is_procedure === true ? 'procedure' : 'function',
      ...qualifiedName(stringList(node.CreateFunctionStmt.funcname)),
    });
  } else if ('CreateTrigStmt' in node && node.CreateTrigStmt.trigname !== undefined) {
    objects.unshift({ type: 'trigger', schema: undefined, name: node.CreateTrigStmt.trigname });
  }
  return ddl(ctx, c, command, objects, more);
}
