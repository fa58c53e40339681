// The differential oracle's seeded query generator: query `index` of seed `seed` is always the same
// text, so a wrong answer is rerun by (seed, index). Every query with a LIMIT or OFFSET has a total
// ORDER BY (ending in the primary key), so each verdict is exact; `ordered` says whether rows are
// compared in order (a total ORDER BY) or as a multiset.
import { ACCOUNT_COUNT, REGION_CODES, SAMPLE_UUIDS, WORDS, prng } from './schema.js';
import { SHAPE_FAMILIES, searchPathFor } from './shapes.js';

export interface GeneratedQuery {
  readonly family: string;
  readonly sql: string;
  readonly ordered: boolean;
  /** The search_path to run it under (set on both connections first); undefined: leave as is. */
  readonly searchPath?: string | undefined;
}

type Rand = () => number;

interface Table {
  readonly name: string;
  readonly alias: string;
  readonly key: string;
  /** Columns that order rows totally. */
  readonly pk: readonly string[];
  readonly ints: readonly string[];
  readonly nums: readonly string[];
  readonly texts: readonly string[];
  readonly bools: readonly string[];
  readonly dates: readonly string[];
  readonly floats: readonly string[];
  keyValue(r: Rand): string;
}

const accountId = (r: Rand): string => {
  const i = 1 + Math.floor(r() * (ACCOUNT_COUNT + 10));
  return String(i % 17 === 0 ? -i * 1000003 : i);
};
const pickOf = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
const int = (r: Rand, lo: number, hi: number): number => lo + Math.floor(r() * (hi - lo + 1));

const TABLES: readonly Table[] = [
  {
    name: 'accounts',
    alias: 'a',
    key: 'id',
    pk: ['id'],
    ints: ['score'],
    nums: ['amount'],
    texts: ['grp', 'name', 'region'],
    bools: ['flag'],
    dates: ['created'],
    floats: [],
    keyValue: accountId,
  },
  {
    name: 'orders',
    alias: 'o',
    key: 'account_id',
    pk: ['account_id', 'id'],
    ints: ['qty', 'id'],
    nums: ['price'],
    texts: ['status'],
    bools: [],
    dates: [],
    floats: [],
    keyValue: accountId,
  },
  {
    name: 'counters',
    alias: 'c',
    key: 'k',
    pk: ['k'],
    ints: ['v'],
    nums: [],
    texts: ['label'],
    bools: [],
    dates: [],
    floats: [],
    keyValue: (r) => String(int(r, -45, 125)),
  },
  {
    name: 'words',
    alias: 'w',
    key: 'w',
    pk: ['w'],
    ints: ['n'],
    nums: [],
    texts: ['tag'],
    bools: [],
    dates: [],
    floats: [],
    keyValue: (r) => `'${r() < 0.9 ? pickOf(r, WORDS) : 'nope'}'`,
  },
  {
    name: 'devices',
    alias: 'd',
    key: 'id',
    pk: ['id'],
    ints: ['seq'],
    nums: [],
    texts: ['kind'],
    bools: [],
    dates: [],
    floats: ['reading'],
    keyValue: (r) => `'${pickOf(r, SAMPLE_UUIDS)}'`,
  },
];

const ACCOUNTS = TABLES[0]!;

/**
 * `array['...']` of uuid texts is text[], and `uuid = text` is an error: the cast keeps the query
 * valid. (An invalid query whose HAVING or ORDER BY aggregates become hidden leaf columns errors on
 * them first at the nodes, so its message can differ from one Postgres's; see shapes.ts.)
 */
const arrayCast = (t: Table): string => (t.name === 'devices' ? '::uuid[]' : '');
const ORDERS = TABLES[1]!;

function textConst(r: Rand, t: Table, col: string): string {
  const pools: Record<string, readonly string[]> = {
    grp: ['g0', 'g1', 'g2', 'g3', 'g4', 'gx'],
    name: ['alpha', 'Beta', 'gamma', 'émile', 'Zürich', 'a b', ''],
    region: REGION_CODES,
    status: ['new', 'paid', 'shipped', 'void'],
    label: ['alpha', 'Beta', 'zeta', 'apple'],
    tag: ['g0', 'g1', 'g2'],
    kind: ['cam', 'gps', 'temp'],
  };
  void t;
  return `'${pickOf(r, pools[col] ?? ['x'])}'`;
}

/** One condition on `t` (qualified with `q` when given). */
function condition(r: Rand, t: Table, q = ''): string {
  const c = (col: string) => `${q}${col}`;
  const k = c(t.key);
  const choice = int(r, 0, 15);
  switch (choice) {
    case 0:
      return `${k} = ${t.keyValue(r)}`;
    case 1:
      return `${k} in (${Array.from({ length: int(r, 2, 6) }, () => t.keyValue(r)).join(', ')})`;
    case 2:
      if (t.name === 'accounts' || t.name === 'orders' || t.name === 'counters')
        return `${k} between ${int(r, -50, 100)} and ${int(r, 100, 250)}`;
      return `${k} > ${t.keyValue(r)}`;
    case 3:
      return r() < 0.5 ? `${k} is not null` : `${k} <> ${t.keyValue(r)}`;
    case 4:
    case 5: {
      const col = pickOf(r, t.ints);
      return pickOf(r, [
        `${c(col)} > ${int(r, -20, 120)}`,
        `${c(col)} <= ${int(r, -20, 120)}`,
        `${c(col)} is null`,
        `${c(col)} is not null`,
        `${c(col)} between ${int(r, -50, 20)} and ${int(r, 20, 150)}`,
        `coalesce(${c(col)}, 0) % 3 = ${int(r, 0, 2)}`,
      ]);
    }
    case 6:
    case 7: {
      const col = pickOf(r, t.texts);
      return pickOf(r, [
        `${c(col)} = ${textConst(r, t, col)}`,
        `${c(col)} in (${textConst(r, t, col)}, ${textConst(r, t, col)})`,
        `${c(col)} is null`,
        `${c(col)} like '${pickOf(r, ['a', 'g', 'p', 'z', 'B'])}%'`,
        `${c(col)} > ${textConst(r, t, col)}`,
        `not (${c(col)} = ${textConst(r, t, col)})`,
      ]);
    }
    case 8:
      if (t.bools.length > 0)
        return pickOf(r, [c(t.bools[0]!), `not ${c(t.bools[0]!)}`, `${c(t.bools[0]!)} is null`]);
      return `${k} is not null`;
    case 9:
      if (t.nums.length > 0) return `${c(t.nums[0]!)} > ${int(r, -200, 400)}.5`;
      return `${c(pickOf(r, t.ints))} < ${int(r, 0, 100)}`;
    case 10:
      if (t.dates.length > 0) return `${c(t.dates[0]!)} >= date '2021-0${int(r, 1, 9)}-15'`;
      if (t.floats.length > 0) return `${c(t.floats[0]!)} > ${int(r, -100, 400)}`;
      return `${c(pickOf(r, t.ints))} <> ${int(r, 0, 10)}`;
    case 11:
      return `(${condition(r, t, q)} or ${condition(r, t, q)})`;
    case 12:
      return `${c(pickOf(r, t.ints))} > 100000`; // empty results
    case 13:
      if (t === ACCOUNTS)
        return `${c('region')} in (select code from regions where rank ${pickOf(r, ['>', '<', 'is not'])} ${r() < 0.5 ? '1' : 'null'})`;
      return `${k} is not null`;
    case 14:
      if (t === ACCOUNTS)
        return `exists (select 1 from regions g where g.code = ${c('region')} and g.rank is not null)`;
      return `${c(pickOf(r, t.ints))} is not null`;
    default:
      return `${k} = any(array[${Array.from({ length: int(r, 1, 4) }, () => t.keyValue(r)).join(', ')}]${arrayCast(t)})`;
  }
}

function where(r: Rand, t: Table, q = '', pNone = 0.3): string {
  if (r() < pNone) return '';
  const n = int(r, 1, 2);
  return ` where ${Array.from({ length: n }, () => condition(r, t, q)).join(' and ')}`;
}

const allCols = (t: Table): string[] => [
  ...t.pk,
  ...t.ints.filter((c) => !t.pk.includes(c)),
  ...t.nums,
  ...t.texts,
  ...t.bools,
  ...t.dates,
  ...t.floats,
];

function someCols(r: Rand, t: Table): string[] {
  const cols = allCols(t).filter(() => r() < 0.5);
  return cols.length === 0 ? [t.key] : cols;
}

function sortTerm(r: Rand, col: string): string {
  const dir = pickOf(r, ['', ' asc', ' desc']);
  const nulls = pickOf(r, ['', '', ' nulls first', ' nulls last']);
  return `${col}${dir}${nulls}`;
}

function limitClause(r: Rand): string {
  const parts: string[] = [];
  if (r() < 0.85) parts.push(` limit ${pickOf(r, [0, 1, 3, 5, 10, 50, 1000])}`);
  if (r() < 0.4 || parts.length === 0) parts.push(` offset ${pickOf(r, [0, 1, 4, 20, 500])}`);
  return parts.join('');
}

function aggregateTerms(r: Rand, t: Table, q = ''): string[] {
  const c = (col: string) => `${q}${col}`;
  const options: string[] = ['count(*)', `count(${c(pickOf(r, allCols(t)))})`];
  for (const i of t.ints)
    options.push(
      `sum(${c(i)})`,
      `min(${c(i)})`,
      `max(${c(i)})`,
      `avg(${c(i)})`,
      `count(distinct ${c(i)})`,
    );
  for (const n of t.nums)
    options.push(`sum(${c(n)})`, `avg(${c(n)})`, `max(${c(n)})`, `min(${c(n)})`);
  for (const x of t.texts) options.push(`min(${c(x)})`, `max(${c(x)})`, `count(distinct ${c(x)})`);
  for (const b of t.bools) options.push(`bool_and(${c(b)})`, `bool_or(${c(b)})`);
  for (const d of t.dates) options.push(`min(${c(d)})`, `max(${c(d)})`);
  for (const f of t.floats) options.push(`min(${c(f)})`, `max(${c(f)})`, `sum(${c(f)})`);
  options.push(`sum(${c(t.key === 'id' && t.name === 'accounts' ? 'id' : pickOf(r, t.ints))})`);
  const n = int(r, 1, 4);
  return Array.from({ length: n }, (_, i) => `${pickOf(r, options)} as x${i}`);
}

function groupKey(r: Rand, t: Table): string {
  const candidates = [...t.texts, ...t.bools, ...t.ints.map((i) => `${i} % 4`)];
  return pickOf(r, candidates);
}

type Family = (r: Rand) => GeneratedQuery;

const FAMILIES: Record<string, { weight: number; make: Family }> = {
  rows: {
    weight: 8,
    make: (r) => {
      const t = pickOf(r, TABLES);
      const cols = r() < 0.2 ? '*' : someCols(r, t).join(', ');
      return {
        family: 'rows',
        sql: `select ${cols} from ${t.name}${where(r, t, '', 0.2)}`,
        ordered: false,
      };
    },
  },
  key_filters: {
    weight: 8,
    make: (r) => {
      const t = pickOf(r, TABLES);
      const cond = Array.from({ length: int(r, 1, 2) }, () => condition(r, t)).join(' and ');
      const pin = int(r, 0, 3);
      const k = t.key;
      const keyCond = [
        `${k} = ${t.keyValue(r)}`,
        `${k} in (${Array.from({ length: int(r, 2, 8) }, () => t.keyValue(r)).join(', ')})`,
        `${k} = any(array[${Array.from({ length: int(r, 2, 5) }, () => t.keyValue(r)).join(', ')}]${arrayCast(t)})`,
        `${k} in (${t.keyValue(r)}) and ${cond}`,
      ][pin]!;
      return {
        family: 'key_filters',
        sql: `select ${someCols(r, t).join(', ')} from ${t.name} where ${keyCond}`,
        ordered: false,
      };
    },
  },
  filters: {
    weight: 8,
    make: (r) => {
      const t = pickOf(r, TABLES);
      return {
        family: 'filters',
        sql: `select ${t.pk.join(', ')}, ${someCols(r, t).join(', ')} from ${t.name}${where(r, t, '', 0)}`,
        ordered: false,
      };
    },
  },
  aggregates: {
    weight: 9,
    make: (r) => {
      const t = pickOf(r, TABLES);
      return {
        family: 'aggregates',
        sql: `select ${aggregateTerms(r, t).join(', ')} from ${t.name}${where(r, t)}`,
        ordered: false,
      };
    },
  },
  group_having: {
    weight: 9,
    make: (r) => {
      const t = pickOf(r, TABLES);
      const g = groupKey(r, t);
      const having =
        r() < 0.4
          ? ` having ${pickOf(r, ['count(*) > 1', 'count(*) >= 3', `min(${t.key}) is not null`, `sum(${pickOf(r, t.ints)}) > 10`, 'count(*) < 0'])}`
          : '';
      const ordered = r() < 0.5;
      const order = ordered
        ? ` order by 1${pickOf(r, ['', ' desc', ' nulls first', ' desc nulls last'])}${r() < 0.5 ? limitClause(r) : ''}`
        : '';
      return {
        family: 'group_having',
        sql: `select ${g} as gk, ${aggregateTerms(r, t).join(', ')} from ${t.name}${where(r, t)} group by ${g}${having}${order}`,
        ordered,
      };
    },
  },
  order_limit: {
    weight: 10,
    make: (r) => {
      const t = pickOf(r, TABLES);
      const cols = someCols(r, t);
      const sortCols = allCols(t)
        .filter(() => r() < 0.3)
        .slice(0, 2)
        .map((c) => sortTerm(r, c));
      const total = r() < 0.8;
      const keys = total
        ? [...sortCols, ...t.pk.map((p) => `${p}${r() < 0.3 ? ' desc' : ''}`)]
        : sortCols.length
          ? sortCols
          : [sortTerm(r, pickOf(r, allCols(t)))];
      const limit = total && r() < 0.75 ? limitClause(r) : '';
      return {
        family: 'order_limit',
        sql: `select ${cols.join(', ')} from ${t.name}${where(r, t)} order by ${keys.join(', ')}${limit}`,
        ordered: total,
      };
    },
  },
  distinct: {
    weight: 6,
    make: (r) => {
      const t = pickOf(r, TABLES);
      const cols = [
        ...new Set([pickOf(r, allCols(t)), ...(r() < 0.5 ? [pickOf(r, allCols(t))] : [])]),
      ];
      const ordered = r() < 0.5;
      const order = ordered
        ? ` order by ${cols.map((c) => sortTerm(r, c)).join(', ')}${r() < 0.5 ? limitClause(r) : ''}`
        : '';
      return {
        family: 'distinct',
        sql: `select distinct ${cols.join(', ')} from ${t.name}${where(r, t)}${order}`,
        ordered,
      };
    },
  },
  colocated_joins: {
    weight: 8,
    make: (r) => {
      const join = r() < 0.75 ? 'join' : 'left join';
      const base = `from accounts a ${join} orders o on a.id = o.account_id`;
      const w = where(r, r() < 0.5 ? ACCOUNTS : ORDERS, r() < 0.5 ? 'a.' : 'o.', 0.4).replace(
        /\bo\.(grp|name|region|score|amount|flag|created)\b/g,
        'a.$1',
      );
      const fixed = fixQualifiers(w);
      if (r() < 0.4) {
        const g = pickOf(r, ['a.grp', 'a.region', 'o.status', 'a.flag']);
        const ordered = r() < 0.5;
        return {
          family: 'colocated_joins',
          sql: `select ${g} as gk, count(*) as n, sum(o.qty) as q, max(o.price) as p, count(o.id) as c ${base}${fixed} group by ${g}${ordered ? ' order by 1 nulls first' : ''}`,
          ordered,
        };
      }
      const ordered = r() < 0.6;
      return {
        family: 'colocated_joins',
        sql: `select a.id, a.name, o.id as oid, o.qty, o.status ${base}${fixed}${ordered ? ` order by a.id, o.id nulls first${r() < 0.5 ? limitClause(r) : ''}` : ''}`,
        ordered,
      };
    },
  },
  reference_joins: {
    weight: 7,
    make: (r) => {
      const kind = int(r, 0, 3);
      const w = fixQualifiers(where(r, ACCOUNTS, 'a.', 0.4));
      if (kind === 0)
        return {
          family: 'reference_joins',
          sql: `select a.id, g.name, g.rank from accounts a join regions g on g.code = a.region${w}`,
          ordered: false,
        };
      if (kind === 1)
        return {
          family: 'reference_joins',
          sql: `select a.id, a.region, g.name from accounts a left join regions g on g.code = a.region${w} order by a.id${r() < 0.5 ? limitClause(r) : ''}`,
          ordered: true,
        };
      if (kind === 2)
        return {
          family: 'reference_joins',
          sql: `select g.name, count(*) as n, avg(a.score) as s from accounts a join regions g on g.code = a.region${w} group by g.name order by g.name`,
          ordered: true,
        };
      return {
        family: 'reference_joins',
        sql: `select g.code, a.id from regions g left join accounts a on a.region = g.code${w}`,
        ordered: false,
      };
    },
  },
  set_operations: {
    weight: 3,
    make: (r) => {
      const op = pickOf(r, ['union', 'union all', 'intersect', 'except']);
      const k = accountId(r);
      const pinned = r() < 0.5;
      const w1 = pinned ? ` where id = ${k}` : where(r, ACCOUNTS);
      const w2 = pinned ? ` where account_id = ${k}` : '';
      return {
        family: 'set_operations',
        sql: `select id from accounts${w1} ${op} select account_id from orders${w2}`,
        ordered: false,
      };
    },
  },
  windows: {
    weight: 3,
    make: (r) => {
      const pinned = r() < 0.6;
      const w = pinned ? ` where account_id = ${accountId(r)}` : '';
      const fn = pickOf(r, ['row_number()', 'rank()', 'sum(qty)', 'count(*)']);
      return {
        family: 'windows',
        sql: `select account_id, id, ${fn} over (order by id, account_id) as wf from orders${w}`,
        ordered: false,
      };
    },
  },
  subqueries: {
    weight: 4,
    make: (r) => {
      const kind = int(r, 0, 3);
      const w =
        kind === 0
          ? ` where region in (select code from regions where rank > ${int(r, 0, 3)})`
          : kind === 1
            ? ` where exists (select 1 from regions g where g.code = a.region and g.name like 'Region ${pickOf(r, ['E', 'U', 'A'])}%')`
            : kind === 2
              ? ` where score > (select avg(score) from accounts)`
              : ` where id in (select account_id from orders where qty > ${int(r, 5, 18)})`;
      const pin = r() < 0.3 ? ` and id = ${accountId(r)}` : '';
      return {
        family: 'subqueries',
        sql: `select id, score from accounts a${w}${pin}`,
        ordered: false,
      };
    },
  },
  nulls: {
    weight: 5,
    make: (r) => {
      const col = pickOf(r, ['grp', 'name', 'score', 'flag', 'amount', 'region']);
      const kind = int(r, 0, 2);
      if (kind === 0)
        return {
          family: 'nulls',
          sql: `select id, ${col} from accounts order by ${sortTerm(r, col)}, id${r() < 0.5 ? limitClause(r) : ''}`,
          ordered: true,
        };
      if (kind === 1)
        return {
          family: 'nulls',
          sql: `select count(${col}) as c, count(*) as n, count(distinct ${col}) as d from accounts where ${col} is ${r() < 0.5 ? '' : 'not '}null`,
          ordered: false,
        };
      return {
        family: 'nulls',
        sql: `select ${col}, count(*) as n from accounts group by ${col} order by 1 ${pickOf(r, ['nulls first', 'nulls last', 'desc'])}`,
        ordered: true,
      };
    },
  },
  empty: {
    weight: 4,
    make: (r) => {
      const kind = int(r, 0, 3);
      if (kind === 0) return { family: 'empty', sql: 'select * from empties', ordered: false };
      if (kind === 1)
        return {
          family: 'empty',
          sql: 'select count(*) as n, sum(v) as s, max(t) as m, avg(v) as a, bool_or(v > 0) as b, count(distinct t) as d from empties',
          ordered: false,
        };
      if (kind === 2)
        return {
          family: 'empty',
          sql: `select grp, count(*) from accounts where score > ${int(r, 1000, 5000)} group by grp`,
          ordered: false,
        };
      return {
        family: 'empty',
        sql: `select ${aggregateTerms(r, ACCOUNTS).join(', ')} from accounts where id < -999999999999`,
        ordered: false,
      };
    },
  },
  global: {
    weight: 1,
    make: (r) =>
      r() < 0.7
        ? { family: 'global', sql: 'select k, v from settings_g order by k', ordered: true }
        : {
            family: 'global',
            sql: 'select a.id, s.v from accounts a join settings_g s on s.k = a.grp',
            ordered: false,
          },
  },
};

/** `where` built for one table but used under a join: qualify the columns of the other table. */
function fixQualifiers(w: string): string {
  return w
    .replace(/\ba\.(qty|price|status)\b/g, 'o.$1')
    .replace(/\ba\.account_id\b/g, 'o.account_id');
}

const ALL_FAMILIES: Record<string, { weight: number; make: Family }> = {
  ...FAMILIES,
  ...SHAPE_FAMILIES,
};

export const FAMILY_NAMES = Object.keys(ALL_FAMILIES);

/**
 * The families of issue 15's query shapes: refused until the router passes PlanOptions (and binds
 * the transaction time), so their refusals are counted apart from the others'.
 */
export const SHAPE_FAMILY_NAMES: ReadonlySet<string> = new Set(Object.keys(SHAPE_FAMILIES));

export type SearchPathMode = 'on' | 'off' | 'shadow';

/**
 * TESSERA_ORACLE_SEARCH_PATH: `shadow` (default: some queries run under a path whose first schema
 * holds a global `accounts` that shadows the sharded one), `on` (paths without it), or `off`.
 */
export function searchPathMode(value: string | undefined): SearchPathMode {
  if (value === undefined || value === '' || value === 'shadow') return 'shadow';
  if (value === 'off' || value === 'on') return value;
  throw new Error(`TESSERA_ORACLE_SEARCH_PATH must be on, off or shadow, not ${value}`);
}

/** Query `index` of `seed`: its own PRNG stream, so any one query can be rebuilt alone. */
export function generateQuery(
  seed: number,
  index: number,
  searchPath: SearchPathMode = 'off',
): GeneratedQuery {
  const r = prng((seed * 1_000_003 + index * 7919) >>> 0);
  r();
  const total = Object.values(ALL_FAMILIES).reduce((n, f) => n + f.weight, 0);
  let x = r() * total;
  let q: GeneratedQuery | undefined;
  for (const f of Object.values(ALL_FAMILIES)) {
    x -= f.weight;
    if (x < 0) {
      q = f.make(r);
      break;
    }
  }
  q ??= FAMILIES['rows']!.make(r);
  // Drawn after the query, so the query text of (seed, index) does not depend on the mode.
  return { ...q, searchPath: searchPathFor(r, searchPath) };
}
