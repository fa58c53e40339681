// Routing of statements over rows that already exist (SELECT, UPDATE, DELETE, COPY TO, LOCK, and
// the reads inside other statements): the node(s) the rows live on, judged by key pins and key
// equalities of the WHERE clause (DESIGN.md section 3).
import {
  queryLevels,
  type Analysis,
  type KeyPin,
  type SelectAnalysis,
  type WhereFacts,
} from '@tessera/sql';
import type { Snapshot } from '@tessera/keyspace';
import { hashPinValues, type ParamSource } from './key-hash.js';
import { home, refuse, single, type Route } from './route-types.js';
import {
  classify,
  qualified,
  type ClassifiedTables,
  type ResolvedRef,
  type ShardedView,
} from './tables.js';

type ShardedRef = ResolvedRef & { view: ShardedView };

/** The WHERE facts of a statement that has none (COPY TO a table, LOCK, INSERT ... VALUES). */
export const NO_WHERE: WhereFacts = {
  hasWhere: false,
  pins: [],
  joinEqualities: [],
  hasOr: false,
  hasNaturalJoin: false,
  isCurrentOf: false,
};

/** `select`: a plain SELECT, which may be planned across nodes; `read`: reads inside other statements. */
type Verb = 'select' | 'read' | 'UPDATE' | 'DELETE' | 'LOCK';

/** SELECT, UPDATE, DELETE, COPY TO, LOCK: the node(s) the rows live on. */
export function routeDml(
  a: Analysis,
  where: WhereFacts,
  catalog: Snapshot,
  params: ParamSource | undefined,
  verb: Verb,
): Route {
  const t = classify(a.tables, catalog);
  const writesReference = t.writes.some((w) => w.view.kind === 'reference');
  if (t.sharded.length === 0) return routeUnsharded(a, t, catalog);
  // Only error messages name the tables: built when one is, not per routed statement.
  const names = (): string[] => t.sharded.map((s) => qualified(s.view));
  if (t.global.length > 0) {
    return refuse(
      `a join of sharded table ${names()[0]} with global table ${qualified(t.global[0]!.view)} is not supported (the global table lives on the home node only)`,
    );
  }
  if (writesReference) {
    const w = t.writes.find((x) => x.view.kind === 'reference')!;
    return refuse(
      `a write to reference table ${qualified(w.view)} that reads sharded table ${names()[0]} is not supported (it must run on every node)`,
    );
  }
  const nested = t.sharded.find((s) => s.ref.scope === 'nested');
  if (nested !== undefined) return routeNested(a, t, where, catalog, params, verb, nested, names);
  const nodes = pinnedNodes(t.sharded, pinPlan(t, where), where, params);
  if (nodes === 'params') return { kind: 'params' };
  if (nodes === 'mixed') return refuse(notColocated(names(), verb));
  if (nodes.size === 1) return single(nodes.values().next().value!);
  // The planner decides whether it can be merged exactly (or refuses with its own sentence).
  if (verb === 'select') return { kind: 'scatter', nodes: [...nodes].sort() };
  if (verb === 'UPDATE' || verb === 'DELETE') {
    // Each node updates its own rows, so the statement must not name one physical row (a
    // cursor, a ctid: every node has a row at that spot).
    if (where.isCurrentOf)
      return refuse(`${verb} ... WHERE CURRENT OF on rows that span nodes is not supported`);
    if (/\bctid\b/i.test(a.sql))
      return refuse(`an ${verb} naming ctid whose rows span nodes is not supported`);
    return { kind: 'multi_write', nodes: [...nodes].sort() };
  }
  const first = t.sharded[0]!;
  return refuse(
    `${crossNodeWhat(verb)} is not supported yet (the key column "${first.view.keyColumn}" of ${qualified(first.view)} is not pinned to one node by the WHERE clause)`,
  );
}

function notColocated(names: readonly string[], verb: Verb): string {
  return `sharded tables ${names.join(', ')} are not joined on their key columns (or are in different keyspaces), so their rows may live on different nodes; ${crossNodeWhat(verb)} is not supported yet`;
}

/**
 * A statement with subqueries, CTEs or set-operation branches reading sharded tables: each query
 * level (libs/sql queryLevels) is pinned by its own top-scope tables and WHERE. When every row any
 * level reads lives on one node, the statement goes there whole. Otherwise a SELECT is planned
 * across the union of the levels' nodes (the planner judges whether each level is node-local);
 * anything else would see only its node's rows of the subquery, so it is refused.
 */
function routeNested(
  a: Analysis,
  t: ClassifiedTables,
  where: WhereFacts,
  catalog: Snapshot,
  params: ParamSource | undefined,
  verb: Verb,
  nested: ShardedRef,
  names: () => string[],
): Route {
  const all = new Set<string>();
  let needsParams = false;
  const add = (nodes: ReadonlySet<string> | 'mixed' | 'params'): boolean => {
    if (nodes === 'mixed') return false;
    if (nodes === 'params') needsParams = true;
    else for (const n of nodes) all.add(n);
    return true;
  };
  if (verb !== 'select') {
    // The statement's own level (UPDATE, DELETE, ...) is not one of queryLevels' SELECTs.
    const top = t.sharded.filter((s) => s.ref.scope === 'top');
    if (top.length > 0 && !add(pinnedNodes(top, makePinPlan(top, where), where, params)))
      return refuse(notColocated(names(), verb));
  }
  let covered = verb === 'select' ? 0 : t.sharded.filter((s) => s.ref.scope === 'top').length;
  for (const level of levelsOf(a)) {
    const own = levelTables(level, a, catalog);
    if (own === undefined) continue;
    covered += own.sharded.length;
    if (!add(pinnedNodes(own.sharded, own.plan, level.where, params)))
      return refuse(
        notColocated(
          own.sharded.map((s) => qualified(s.view)),
          verb,
        ),
      );
  }
  // A table no SELECT level holds (the target of a data-modifying CTE) may be on any owner.
  if (a.hasDataModifyingCtes || covered < t.sharded.length)
    for (const s of t.sharded) for (const n of s.view.keyspace.owners) all.add(n);
  if (needsParams) return { kind: 'params' };
  if (all.size === 1) return single(all.values().next().value!);
  if (verb === 'select') return { kind: 'scatter', nodes: [...all].sort() };
  if (verb === 'UPDATE' || verb === 'DELETE')
    return refuse(
      `an ${verb} whose rows span nodes with a subquery or CTE reading sharded table ${qualified(nested.view)} is not supported yet`,
    );
  return refuse(
    `a subquery or CTE reading sharded table ${qualified(nested.view)} is not supported yet (its rows may live on other nodes)`,
  );
}

// Per analysis (frozen, cached by text): its query levels, parsed once.
const levelMemo = new WeakMap<Analysis, readonly SelectAnalysis[]>();

function levelsOf(a: Analysis): readonly SelectAnalysis[] {
  let levels = levelMemo.get(a);
  if (levels === undefined) levelMemo.set(a, (levels = queryLevels(a.sql)));
  return levels;
}

interface LevelTables {
  /** The level's own (top-scope) sharded references, indexes into the level's tables. */
  readonly sharded: readonly ShardedRef[];
  readonly plan: PinPlan;
}

// Per level's classified tables (one object per level and catalog snapshot, tables.ts).
const levelTablesMemo = new WeakMap<ClassifiedTables, LevelTables | undefined>();

/**
 * A level's own sharded tables and their pin plan, or undefined when it reads none. A level is
 * analysed on its own, so a CTE of an enclosing level looks like a table to it: only names the
 * whole statement reads as relations count (a CTE that shadows such a name only adds nodes).
 */
function levelTables(
  level: SelectAnalysis,
  a: Analysis,
  catalog: Snapshot,
): LevelTables | undefined {
  const classified = classify(level.tables, catalog);
  if (levelTablesMemo.has(classified)) return levelTablesMemo.get(classified);
  const own = classified.sharded.filter(
    (s) =>
      s.ref.scope === 'top' &&
      a.tables.some((r) => r.name === s.ref.name && r.schema === s.ref.schema),
  );
  const found =
    own.length === 0 ? undefined : { sharded: own, plan: makePinPlan(own, level.where) };
  levelTablesMemo.set(classified, found);
  return found;
}

function crossNodeWhat(verb: Verb): string {
  switch (verb) {
    case 'select':
    case 'read':
      return 'a read across nodes';
    case 'LOCK':
      return 'LOCK of a sharded table (it spans nodes)';
    default:
      return `an ${verb} whose rows span nodes`;
  }
}

/** Which key column each top-scope sharded reference (by table index) pins through. */
type PinPlan = { readonly keyOf: ReadonlyMap<number, string> } | 'mixed' | ReadonlySet<string>;

// Per classified tables (memoized per statement and catalog, tables.ts) and join equalities: what
// pinnedNodes decides before it looks at any value. Keyed by the join equalities, not the WHERE
// facts: analyses of one shape from the literal-normalising cache carry WHERE facts of their own
// (new pin values) but share the equalities, which hold no literal.
const pinPlans = new WeakMap<
  ClassifiedTables,
  { joins: WhereFacts['joinEqualities']; plan: PinPlan }
>();

function pinPlan(t: ClassifiedTables, where: WhereFacts): PinPlan {
  const hit = pinPlans.get(t);
  if (hit !== undefined && hit.joins === where.joinEqualities) return hit.plan;
  const plan = makePinPlan(t.sharded, where);
  pinPlans.set(t, { joins: where.joinEqualities, plan });
  return plan;
}

/**
 * Whether the sharded tables are colocated by the statement itself: the nodes when they are in
 * different keyspaces all owned alike, 'mixed' when they are not colocated, else the key column
 * of each top-scope reference, joined into one group by key = key equalities.
 */
function makePinPlan(tables: readonly ShardedRef[], where: WhereFacts): PinPlan {
  const keyspace = tables[0]!.view.keyspace;
  if (tables.some((s) => s.view.keyspace.name !== keyspace.name)) {
    return keyspace.owners.length === 1 &&
      tables.every((s) => s.view.keyspace.owners.join() === keyspace.owners.join())
      ? new Set(keyspace.owners)
      : 'mixed';
  }
  // Union-find over top-scope sharded references joined key = key.
  const top = tables.filter((s) => s.ref.scope === 'top');
  const parent = new Map<number, number>(top.map((s) => [s.index, s.index]));
  const find = (i: number): number => {
    let r = i;
    while (parent.get(r) !== r) r = parent.get(r)!;
    return r;
  };
  const keyOf = new Map<number, string>(top.map((s) => [s.index, s.view.keyColumn]));
  for (const eq of where.joinEqualities) {
    const l = eq.left.tableIndex;
    const r = eq.right.tableIndex;
    if (l === undefined || r === undefined || !parent.has(l) || !parent.has(r)) continue;
    if (keyOf.get(l) === eq.left.column && keyOf.get(r) === eq.right.column)
      parent.set(find(l), find(r));
  }
  const roots = new Set(top.map((s) => find(s.index)));
  if (roots.size > 1 && keyspace.owners.length > 1) return 'mixed';
  return { keyOf };
}

/**
 * The nodes the rows of `tables` (a statement's or one query level's sharded references) can be
 * on, judged by key pins and key equalities; 'mixed' if they are not colocated by the statement.
 */
function pinnedNodes(
  tables: readonly ShardedRef[],
  plan: PinPlan,
  where: WhereFacts,
  params: ParamSource | undefined,
): ReadonlySet<string> | 'mixed' | 'params' {
  if (plan === 'mixed' || !('keyOf' in plan)) return plan;
  const { keyOf } = plan;
  const keyspace = tables[0]!.view.keyspace;
  let nodes: ReadonlySet<string> | undefined;
  let needsParams = false;
  for (const pin of where.pins) {
    if (pin.ambiguous || pin.tableIndex === undefined || keyOf.get(pin.tableIndex) !== pin.column)
      continue;
    const owners = ownersOfPin(pin, keyspace, params);
    if (owners === 'params') {
      needsParams = true;
      continue;
    }
    if (owners === 'unpinnable') continue;
    nodes = nodes === undefined ? owners : new Set([...nodes].filter((n) => owners.has(n)));
  }
  if (nodes !== undefined) {
    // `key = NULL` or disjoint pins match no row: any one owner answers (with nothing).
    return nodes.size === 0 ? new Set([keyspace.owners[0]!]) : nodes;
  }
  if (needsParams) return 'params';
  return new Set(keyspace.owners);
}

/** Read only, shared: one per node. */
const onlyNodeSets = new Map<string, ReadonlySet<string>>();

function onlyNode(node: string): ReadonlySet<string> {
  let set = onlyNodeSets.get(node);
  if (set === undefined) onlyNodeSets.set(node, (set = new Set([node])));
  return set;
}

function ownersOfPin(
  pin: KeyPin,
  keyspace: ShardedView['keyspace'],
  params: ParamSource | undefined,
): ReadonlySet<string> | 'params' | 'unpinnable' {
  if (pin.matchesNothing) return new Set();
  const hashes = hashPinValues(pin.values, keyspace.keyType, keyspace.seed, params);
  if (hashes === 'params' || hashes === 'unpinnable') return hashes;
  // The common pin, key = one value: a set made once per node.
  if (hashes.length === 1 && hashes[0] !== null) return onlyNode(keyspace.ownerOf(hashes[0]!));
  const owners = new Set<string>();
  for (const h of hashes) if (h !== null) owners.add(keyspace.ownerOf(h));
  return owners;
}

/** No sharded table: reference tables anywhere (written: everywhere), global tables at home. */
function routeUnsharded(a: Analysis, t: ClassifiedTables, catalog: Snapshot): Route {
  const refWrite = t.writes.find((w) => w.view.kind === 'reference');
  if (refWrite) {
    if (t.global.length > 0) {
      return refuse(
        `a write to reference table ${qualified(refWrite.view)} that reads global table ${qualified(t.global[0]!.view)} is not supported (it must run on every node)`,
      );
    }
    if (a.hasVolatileFunctions) {
      return refuse(
        `a write to reference table ${qualified(refWrite.view)} calling a volatile function is not supported (each node would store a different value)`,
      );
    }
    return { kind: 'all', nodes: catalog.nodes, after: new Map(), why: 'reference_write' };
  }
  if (t.global.length > 0) return home(catalog, false);
  // Reference tables only, or no table at all: every node answers alike.
  return home(catalog, true);
}
