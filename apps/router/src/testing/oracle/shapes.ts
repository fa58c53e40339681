// Generator families for the query shapes of issue 15 that libs/sql and libs/merge plan behind
// PlanOptions (expressions over aggregates, = ANY arrays, transaction time, subqueries in FROM,
// CTEs, UNION ALL). Until the router passes those options (and binds the transaction time) most of
// them are refused; they must never be answered wrongly. Every LIMIT has a total ORDER BY.
import { ACCOUNT_COUNT, REGION_CODES } from './schema.js';

type Rand = () => number;

export interface ShapeQuery {
  readonly family: string;
  readonly sql: string;
  readonly ordered: boolean;
}

const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
const int = (r: Rand, lo: number, hi: number): number => lo + Math.floor(r() * (hi - lo + 1));

const accountId = (r: Rand): string => {
  const i = 1 + Math.floor(r() * (ACCOUNT_COUNT + 10));
  return String(i % 17 === 0 ? -i * 1000003 : i);
};

const ids = (r: Rand, lo: number, hi: number): string =>
  Array.from({ length: int(r, lo, hi) }, () => accountId(r)).join(', ');

function accountsWhere(r: Rand): string {
  return pick(r, [
    '',
    ` where score > ${int(r, -30, 100)}`,
    ` where grp in ('g1', 'g2', 'g3')`,
    ` where amount is not null and flag`,
    ` where id = any(array[${ids(r, 2, 6)}])`,
    ` where region = '${pick(r, REGION_CODES)}'`,
  ]);
}

/** An expression over aggregate results of accounts (int4 score, numeric(10,2) amount). */
function aggregateExpression(r: Rand): string {
  return pick(r, [
    'count(*)::int',
    'count(*)::int4',
    'count(score)::smallint',
    'coalesce(sum(score), 0)',
    'coalesce(sum(amount), 0)',
    'coalesce(max(score), -1)',
    'sum(score) / count(*)',
    'sum(score) % 7',
    'sum(amount) / count(*)',
    'round(avg(score), 2)',
    'round(avg(amount), 1)',
    'round(avg(amount))',
    'trunc(avg(score), 3)',
    'max(score) - min(score) + 1',
    'count(*) * 2 + 1',
    '-sum(score)',
    'sum(amount) * 2',
    'avg(amount)::numeric(12, 2)',
    'sum(score) / nullif(count(*), 0)',
    'count(*) + 0.5',
    'sum(score)::numeric / 3',
  ]);
}

type Make = (r: Rand) => ShapeQuery;

export const SHAPE_FAMILIES: Record<string, { readonly weight: number; readonly make: Make }> = {
  agg_expressions: {
    weight: 6,
    make: (r) => {
      const exprs = Array.from(
        { length: int(r, 1, 3) },
        (_, i) => `${aggregateExpression(r)} as e${i}`,
      );
      const w = accountsWhere(r);
      if (r() < 0.5)
        return {
          family: 'agg_expressions',
          sql: `select ${exprs.join(', ')} from accounts${w}`,
          ordered: false,
        };
      const g = pick(r, ['grp', 'region', 'flag', 'score % 3']);
      const having =
        r() < 0.4
          ? ` having ${pick(r, ['sum(score) / count(*) > 10', 'count(*)::int >= 3', 'coalesce(max(amount), 0) > 100'])}`
          : '';
      const ordered = r() < 0.5;
      const order = ordered
        ? ` order by ${pick(r, ['coalesce(sum(score), 0) desc', 'e0', 'count(*) * 2', '2'])}, 1 nulls first${r() < 0.5 ? ` limit ${int(r, 1, 5)}` : ''}`
        : '';
      return {
        family: 'agg_expressions',
        sql: `select ${g} as gk, ${exprs.join(', ')} from accounts${w} group by ${g}${having}${order}`,
        // ORDER BY an expression then the group key: total, since group keys are distinct.
        ordered,
      };
    },
  },
  any_arrays: {
    weight: 4,
    make: (r) => {
      const k = pick(r, [
        `id = any(array[${ids(r, 2, 8)}])`,
        `id = any('{${ids(r, 2, 6).replaceAll(' ', '')}}')`,
        `id = any(array[${ids(r, 1, 3)}]::bigint[])`,
      ]);
      if (r() < 0.5)
        return {
          family: 'any_arrays',
          sql: `select id, name, score from accounts where ${k}`,
          ordered: false,
        };
      return {
        family: 'any_arrays',
        sql: `select count(*), sum(o.qty) from accounts a join orders o on o.account_id = a.id where a.${k}`,
        ordered: false,
      };
    },
  },
  time_functions: {
    weight: 3,
    make: (r) => {
      // Predicates whose truth does not depend on the instant (the data is from 2021 and 2022).
      const cond = pick(r, [
        'created < current_date',
        'created < now()',
        "created > now() - interval '100 years'",
        'created <= localtimestamp',
        'extract(year from current_timestamp) > 2000',
        'created < transaction_timestamp()',
      ]);
      if (r() < 0.5)
        return {
          family: 'time_functions',
          sql: `select id, created from accounts where ${cond}`,
          ordered: false,
        };
      return {
        family: 'time_functions',
        sql: `select grp, count(*) from accounts where ${cond} group by grp order by grp nulls first`,
        ordered: true,
      };
    },
  },
  from_subqueries: {
    weight: 5,
    make: (r) => {
      const w = accountsWhere(r);
      return pick(r, [
        {
          family: 'from_subqueries',
          sql: `select count(*) from (select distinct grp from accounts${w}) s`,
          ordered: false,
        },
        {
          family: 'from_subqueries',
          sql: `select count(*) from (select distinct id, grp from accounts${w}) s`,
          ordered: false,
        },
        {
          family: 'from_subqueries',
          sql: `select count(*) as count_1 from (select a.id as a_id, a.name as a_name from accounts a${w.replace(' where ', ' where a.')}) as anon_1`,
          ordered: false,
        },
        {
          family: 'from_subqueries',
          sql: `select count(*) from (select id from accounts${w} order by id limit ${int(r, 1, 50)}) s`,
          ordered: false,
        },
        {
          family: 'from_subqueries',
          sql: `select s.account_id, s.n, s.q from (select account_id, count(*) as n, sum(qty) as q from orders group by account_id) s where s.n > ${int(r, 0, 3)} order by s.account_id limit ${int(r, 1, 20)}`,
          ordered: true,
        },
        {
          family: 'from_subqueries',
          sql: `select count(*), sum(n), max(q) from (select account_id, count(*) as n, sum(qty) as q from orders group by account_id) s`,
          ordered: false,
        },
        {
          family: 'from_subqueries',
          sql: `select s.name, g.name as region from (select id, name, region from accounts${w}) s join regions g on g.code = s.region`,
          ordered: false,
        },
      ]);
    },
  },
  ctes: {
    weight: 3,
    make: (r) =>
      pick(r, [
        {
          family: 'ctes',
          sql: `with x as (select id, grp from accounts where score > ${int(r, -20, 80)}) select grp, count(*) from x group by grp order by grp nulls first`,
          ordered: true,
        },
        {
          family: 'ctes',
          sql: `with x as (select account_id, qty from orders where account_id = ${accountId(r)}) select * from x`,
          ordered: false,
        },
        {
          family: 'ctes',
          sql: `with x as (select id, region from accounts where id = ${accountId(r)}) select x.id, g.name from x join regions g on g.code = x.region`,
          ordered: false,
        },
      ]),
  },
  union_all: {
    weight: 3,
    make: (r) =>
      pick(r, [
        {
          family: 'union_all',
          sql: `select id from accounts union all select account_id from orders`,
          ordered: false,
        },
        {
          family: 'union_all',
          sql: `select id from accounts union all select account_id from orders order by 1 desc limit ${int(r, 1, 30)}`,
          ordered: true,
        },
        {
          family: 'union_all',
          sql: `select grp from accounts union select status from orders`,
          ordered: false,
        },
        {
          family: 'union_all',
          sql: `select k as v from counters where v > ${int(r, -100, 300)} union all select n from words order by 1 nulls first limit ${int(r, 1, 40)} offset ${int(r, 0, 5)}`,
          ordered: true,
        },
      ]),
  },
};

/**
 * search_path values every query may run under (TESSERA_ORACLE_SEARCH_PATH=off: none). With
 * `shadow`, a schema `shadow` holding another `accounts` comes first for some queries, which needs
 * the router to resolve names by search_path (issue 14): off by default until it does.
 */
export function searchPathFor(r: Rand, mode: 'on' | 'off' | 'shadow'): string | undefined {
  if (mode === 'off') return undefined;
  const paths = ['public', '"$user", public', 'public, pg_catalog', 'pg_catalog, public'];
  if (mode === 'shadow') paths.push('shadow, public');
  return pick(r, paths);
}
