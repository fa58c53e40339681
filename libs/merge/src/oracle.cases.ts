// The hand-written differential corpus: each query with the outcome it must have when its rows
// are spread over three nodes (equal to plain Postgres in order or as a multiset, the same error,
// or a 0A000 refusal).
export interface Case {
  readonly sql: string;
  readonly params?: unknown[];
  /** `ordered`: the ORDER BY is total, compare in order; `set`: compare as multisets. */
  readonly expect: 'ordered' | 'set' | 'error' | 'refused';
}

export const CASES: Record<string, Case> = {
  // Plain rows, IN lists pinning several nodes.
  'rows by IN list': {
    sql: 'select id, name from t where id in (1, 2, 3, 4, 5, 300)',
    expect: 'set',
  },
  'all rows, star': { sql: 'select * from t', expect: 'set' },
  'rows with = ANY param': {
    sql: 'select id, grp from t where id = any($1)',
    params: [[3, 4, 5, 6]],
    expect: 'set',
  },
  'filter on non-key': {
    sql: "select id, score from t where grp = 'g3' and score > 10",
    expect: 'set',
  },
  // ORDER BY: k-way merge, NULLS FIRST / LAST, hidden columns, positions, aliases, every type.
  'order by key': { sql: 'select id, name from t order by id', expect: 'ordered' },
  'order by text then key': { sql: 'select id, name from t order by name, id', expect: 'ordered' },
  'order by text desc': {
    sql: 'select id, name from t order by name desc, id desc',
    expect: 'ordered',
  },
  'order by int nulls first': {
    sql: 'select id, score from t order by score nulls first, id',
    expect: 'ordered',
  },
  'order by int desc nulls last': {
    sql: 'select id, score from t order by score desc nulls last, id',
    expect: 'ordered',
  },
  'order by int default nulls last': {
    sql: 'select id, score from t order by score, id',
    expect: 'ordered',
  },
  'order by int desc default nulls first': {
    sql: 'select id, score from t order by score desc, id',
    expect: 'ordered',
  },
  'order by hidden columns': { sql: 'select name from t order by created, id', expect: 'ordered' },
  'star with hidden sort column': {
    sql: 'select *, score * 2 as double from t order by double, id',
    expect: 'ordered',
  },
  'order by alias and position': {
    sql: 'select id, name as n from t order by n desc, 1',
    expect: 'ordered',
  },
  'order by float with NaN and infinities': {
    sql: 'select id, ratio from t order by ratio, id',
    expect: 'ordered',
  },
  'order by float desc': {
    sql: 'select id, ratio from t order by ratio desc nulls last, id',
    expect: 'ordered',
  },
  'order by timestamptz across DST': {
    sql: 'select id, tz from t order by tz desc, id',
    expect: 'ordered',
  },
  'order by timestamp': { sql: 'select id, ts from t order by ts, id', expect: 'ordered' },
  'order by date with BC and infinity': {
    sql: 'select id, created from t order by created, id',
    expect: 'ordered',
  },
  'order by uuid': { sql: 'select id, code from t order by code', expect: 'ordered' },
  'order by bpchar': { sql: 'select id, ch from t order by ch, id', expect: 'ordered' },
  'order by bool': {
    sql: 'select id, active from t order by active nulls first, id',
    expect: 'ordered',
  },
  'order by varchar desc': { sql: 'select id, vc from t order by vc desc, id', expect: 'ordered' },
  'order by int8': { sql: 'select id, big from t order by big, id', expect: 'ordered' },
  'order by numeric': { sql: 'select id, amount from t order by amount, id', expect: 'ordered' },
  'order by numeric specials': { sql: 'select id, v from sp order by v, id', expect: 'ordered' },
  'order by float specials desc': {
    sql: 'select id, f from sp order by f desc, id',
    expect: 'ordered',
  },
  'order by COLLATE C': {
    sql: 'select id, name from t order by name collate "C", id',
    expect: 'ordered',
  },
  'order by expression': {
    sql: 'select id from t order by score % 7 nulls first, id desc',
    expect: 'ordered',
  },
  // LIMIT / OFFSET.
  limit: { sql: 'select id from t order by id limit 10', expect: 'ordered' },
  'limit offset': { sql: 'select id from t order by id limit 10 offset 25', expect: 'ordered' },
  'offset only': { sql: 'select id from t order by id offset 290', expect: 'ordered' },
  'limit offset on text': {
    sql: 'select id, name from t order by name desc nulls last, id limit 7 offset 3',
    expect: 'ordered',
  },
  'limit offset params': {
    sql: 'select id from t where id = any($1) order by id limit $2 offset $3',
    params: [[1, 2, 3, 4, 5, 6, 7, 8, 9], 4, 2],
    expect: 'ordered',
  },
  'fetch first': {
    sql: 'select id from t order by id desc fetch first 4 rows only',
    expect: 'ordered',
  },
  'limit 0': { sql: 'select id from t order by id limit 0', expect: 'ordered' },
  'limit all': { sql: 'select id from t order by id limit all offset 295', expect: 'ordered' },
  'negative limit errors': { sql: 'select id from t order by id limit -1', expect: 'error' },
  'negative offset errors': { sql: 'select id from t order by id offset -1', expect: 'error' },
  // DISTINCT.
  distinct: { sql: 'select distinct grp from t', expect: 'set' },
  'distinct ordered': {
    sql: 'select distinct grp, active from t order by grp, active',
    expect: 'ordered',
  },
  'distinct with limit': {
    sql: 'select distinct score from t order by score nulls first limit 5',
    expect: 'ordered',
  },
  'distinct numeric': { sql: 'select distinct num from t', expect: 'set' },
  'distinct bpchar': { sql: 'select distinct ch from t', expect: 'set' },
  'distinct float': { sql: 'select distinct f from sp', expect: 'set' },
  // Aggregates without GROUP BY.
  'count star': { sql: 'select count(*) from t', expect: 'ordered' },
  'count columns': { sql: 'select count(score), count(name), count(1) from t', expect: 'ordered' },
  'sums of every integer width and numeric': {
    sql: 'select sum(score), sum(small), sum(big), sum(amount), sum(num) from t',
    expect: 'ordered',
  },
  'min max of many types': {
    sql: 'select min(score), max(score), min(name), max(name), min(amount), max(num) from t',
    expect: 'ordered',
  },
  'min max of dates, floats, varchar, bpchar': {
    sql: 'select min(created), max(tz), min(vc), max(ratio), min(ch), max(ts) from t',
    expect: 'ordered',
  },
  'avg of every integer width and numeric': {
    sql: 'select avg(score), avg(small), avg(big), avg(amount), avg(num) from t',
    expect: 'ordered',
  },
  'bool aggregates': {
    sql: 'select bool_and(active), bool_or(active), every(active) from t',
    expect: 'ordered',
  },
  'count distinct': {
    sql: 'select count(distinct grp), count(distinct score), count(distinct amount), count(distinct ch) from t',
    expect: 'ordered',
  },
  'aggregates with FILTER': {
    sql: 'select count(*) filter (where active), sum(score) filter (where score > 50), avg(small) filter (where grp = $1) from t',
    params: ['g2'],
    expect: 'ordered',
  },
  'constant beside aggregate': { sql: "select 'k' as kind, count(*), 1 from t", expect: 'ordered' },
  'numeric specials sum avg min max': {
    sql: 'select sum(v), avg(v), min(v), max(v), max(f), min(f) from sp',
    expect: 'ordered',
  },
  'sum of int8 beyond int8 range is numeric': {
    sql: 'select sum(big), avg(big), sum(n), avg(n) from huge',
    expect: 'ordered',
  },
  'aggregates over no rows': {
    sql: 'select count(*), sum(score), avg(score), min(name), bool_and(active), count(distinct grp) from t where id < 0',
    expect: 'ordered',
  },
  'aggregates over empty table': {
    sql: 'select count(*), sum(big), avg(amount), max(tz), bool_or(active), count(distinct name) from e',
    expect: 'ordered',
  },
  'avg of all NULL': {
    sql: 'select avg(score), sum(amount) from t where score is null and amount is null',
    expect: 'ordered',
  },
  'avg of one group of numeric(10,3)': {
    sql: "select avg(amount) from t where grp = 'g1'",
    expect: 'ordered',
  },
  'count distinct and plain aggregates': {
    sql: 'select count(distinct grp), count(*), sum(score), avg(score), min(name) from t',
    expect: 'ordered',
  },
  'overflow inside a node propagates': {
    sql: 'select sum(big * 10000000) from t',
    expect: 'error',
  },
  'division by zero inside a node propagates': {
    sql: 'select sum(score / (score - score)) from t',
    expect: 'error',
  },
  // GROUP BY, HAVING, ORDER BY, LIMIT together.
  'group by text': {
    sql: 'select grp, count(*), sum(score), avg(amount) from t group by grp',
    expect: 'set',
  },
  'group by two keys with null keys': {
    sql: 'select grp, active, count(*) from t group by grp, active order by grp nulls first, active nulls first',
    expect: 'ordered',
  },
  'group by position order by aggregate': {
    sql: 'select grp, count(*) from t group by 1 order by 2 desc, 1',
    expect: 'ordered',
  },
  'group by expression': {
    sql: 'select lower(name) as l, max(score) from t group by 1 order by 1',
    expect: 'ordered',
  },
  'group key not selected': { sql: 'select count(*), min(id) from t group by grp', expect: 'set' },
  'group by int with nulls': {
    sql: 'select score, count(*) from t group by score order by score nulls first',
    expect: 'ordered',
  },
  'group by numeric': {
    sql: 'select num, count(*) from t group by num order by num',
    expect: 'ordered',
  },
  'group by bool': {
    sql: 'select active, avg(score), bool_or(score > 70) from t group by active order by active',
    expect: 'ordered',
  },
  'group by date': {
    sql: 'select created, count(*) from t group by created order by 2 desc, 1 limit 5',
    expect: 'ordered',
  },
  'count distinct per group': {
    sql: 'select grp, count(distinct score), count(*), avg(score) from t group by grp order by grp',
    expect: 'ordered',
  },
  'having count': {
    sql: 'select grp, count(*) from t group by grp having count(*) > 40 order by grp',
    expect: 'ordered',
  },
  'having or is null': {
    sql: 'select grp, sum(score) from t group by grp having sum(score) > 1000 or min(score) is null order by grp',
    expect: 'ordered',
  },
  'having on text aggregate': {
    sql: "select grp from t group by grp having max(name) >= 'b' order by grp",
    expect: 'ordered',
  },
  'having not': {
    sql: 'select grp, min(score), max(score) from t group by grp having not (min(score) > -15) order by grp',
    expect: 'ordered',
  },
  'having on group key': {
    sql: "select grp, count(*) from t group by grp having grp <> 'g3' and grp is not null order by grp",
    expect: 'ordered',
  },
  'having on numeric avg': {
    sql: 'select grp, avg(amount) from t group by grp having avg(amount) > 19.5 order by grp',
    expect: 'ordered',
  },
  'having without group by': {
    sql: 'select count(*) from t having count(*) > 1000',
    expect: 'ordered',
  },
  'group having order limit offset': {
    sql: 'select grp, avg(score) as a from t group by grp having count(*) >= 2 order by a desc nulls last, grp limit 3 offset 1',
    expect: 'ordered',
  },
  'order by hidden aggregate': {
    sql: 'select grp from t group by grp order by count(*) desc, grp limit 4',
    expect: 'ordered',
  },
  'distinct over groups': { sql: 'select distinct count(*) from t group by active', expect: 'set' },
  'group by on empty table': { sql: 'select grp, count(*) from e group by grp', expect: 'set' },
  'group by avg of int2': {
    sql: 'select grp, avg(small) from t group by grp order by 2 nulls first, grp',
    expect: 'ordered',
  },
  'group by with IN list': {
    sql: 'select grp, count(*) from t where id in (1, 4, 7, 2, 5) group by grp order by grp',
    expect: 'ordered',
  },
  'count(*) limit 0': { sql: 'select count(*) from t limit 0', expect: 'ordered' },
  'group by with LIMIT param kept at the router': {
    sql: 'select grp, count(*) from t where id = any($1) group by grp order by grp limit $2',
    params: [[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 2],
    expect: 'ordered',
  },
  'having with params renumbered': {
    sql: 'select grp, sum(score) from t where score > $2 group by grp order by grp nulls first limit $1',
    params: [3, 0],
    expect: 'ordered',
  },
  // Reference tables and subqueries over them.
  'outer join preserving the sharded side': {
    sql: 'select t.id, r.label from t left join r on r.code = t.grp order by t.id',
    expect: 'ordered',
  },
  'outer join preserving a reference table refused': {
    sql: 'select r.code, t.id from r left join t on t.grp = r.code',
    expect: 'refused',
  },
  'join a reference table': {
    sql: 'select t.id, r.label from t join r on r.code = t.grp order by t.id',
    expect: 'ordered',
  },
  'subquery over a reference table': {
    sql: 'select id from t where grp in (select code from r where keep) order by id',
    expect: 'ordered',
  },
  'group by over a reference join': {
    sql: 'select r.label, count(*) from t join r on r.code = t.grp group by r.label order by 1',
    expect: 'ordered',
  },
  // Empty results.
  'ordered rows of an empty table': { sql: 'select * from e order by id', expect: 'ordered' },
  // Refusals (plan time and run time).
  'window function refused': {
    sql: 'select id, row_number() over (order by id) from t',
    expect: 'refused',
  },
  'union refused': { sql: 'select id from t union select id from e', expect: 'refused' },
  'distinct on refused': {
    sql: 'select distinct on (grp) grp, id from t order by grp, id',
    expect: 'refused',
  },
  'string_agg refused': { sql: "select string_agg(name, ',') from t", expect: 'refused' },
  'sum of float refused at run time': { sql: 'select sum(ratio) from t', expect: 'refused' },
  'avg of float refused at run time': {
    sql: 'select grp, avg(ratio) from t group by grp',
    expect: 'refused',
  },
  'subquery over sharded table refused': {
    sql: 'select id from t where id in (select id from e)',
    expect: 'refused',
  },
  'max of interval': {
    sql: "select max(ts - timestamp '2020-01-01'), min(ts - timestamp '2020-01-01') from t",
    expect: 'ordered',
  },
  'order by interval': {
    sql: "select id, ts - timestamp '2020-01-01' as d from t order by d, id",
    expect: 'ordered',
  },
  'interval groups by span (1 mon = 30 days)': {
    sql: "select count(distinct case when id % 2 = 0 then interval '1 mon' else interval '30 days' end), count(distinct ts - timestamp '2020-01-01') from t",
    expect: 'ordered',
  },
  'group by interval, key hidden': {
    sql: "select count(*) from t group by case when id % 2 = 0 then interval '1 mon' else interval '30 days' end",
    expect: 'ordered',
  },
  'order by jsonb of every shape': {
    sql: `select id, case id % 7 when 0 then to_jsonb(score) when 1 then to_jsonb(name)
            when 2 then jsonb_build_array(score, name) when 3 then jsonb_build_object('a', score, 'bb', name)
            when 4 then 'null'::jsonb when 5 then to_jsonb(active) else '[]'::jsonb end as j
          from t order by j desc, id`,
    expect: 'ordered',
  },
  'jsonb groups by value (1.0 = 1.00)': {
    sql: `select count(*) from t group by (case when id % 2 = 0
            then '{"a": 1.0, "b": [true, null]}' else '{"b": [true, null], "a": 1.00}' end)::jsonb`,
    expect: 'ordered',
  },
  'order by inet refused at run time': {
    sql: "select id, ('10.0.0.' || (id % 200))::inet as a from t order by a, id",
    expect: 'refused',
  },
  'expression over aggregates refused': { sql: 'select sum(score) + 1 from t', expect: 'refused' },
  'for update refused': {
    sql: 'select id from t where id in (1, 2) for update',
    expect: 'refused',
  },
};
