// The hand-written differential corpus: named queries over the oracle schema with the route each
// must take through the router (single node, scatter across nodes, the home node, or refused) and
// whether its ORDER BY is total (rows compared in order) or not (compared as multisets).
export type ExpectedRoute = 'single' | 'scatter' | 'home' | 'refuse';

export interface CorpusCase {
  readonly sql: string;
  readonly route: ExpectedRoute;
  readonly ordered?: boolean;
}

export const CORPUS: Record<string, CorpusCase> = {
  // One node: the fast path.
  'pinned bigint key': { sql: 'select * from accounts where id = 7', route: 'single' },
  'pinned negative key': {
    sql: 'select id, name from accounts where id = -17000051',
    route: 'single',
  },
  'pinned int key': { sql: 'select * from counters where k = -3', route: 'single' },
  'pinned text key': { sql: "select * from words where w = 'w0x'", route: 'single' },
  'pinned key, missing row': {
    sql: 'select * from accounts where id = 123456789',
    route: 'single',
  },
  'pinned colocated join': {
    sql: 'select a.name, o.id, o.qty from accounts a join orders o on a.id = o.account_id where a.id = 3 order by o.id',
    route: 'single',
    ordered: true,
  },
  'pinned window': {
    sql: 'select id, qty, sum(qty) over (order by id) from orders where account_id = 4',
    route: 'single',
  },
  'key = NULL matches nothing': { sql: 'select * from accounts where id = null', route: 'single' },
  // Home: global and reference tables, no table.
  'global table': { sql: 'select * from settings_g order by k', route: 'home', ordered: true },
  'reference table': { sql: 'select * from regions order by code', route: 'home', ordered: true },
  'reference aggregate': {
    sql: 'select count(*), count(rank), sum(rank), min(name) from regions',
    route: 'home',
  },
  'no table': { sql: 'select 1 as one, null::int as n', route: 'home' },
  // Plain rows across nodes.
  'all rows': { sql: 'select * from accounts', route: 'scatter' },
  'IN list over nodes': {
    sql: 'select id, name from accounts where id in (1, 2, 3, 4, 5, 6, 7, 8, 9, 10)',
    route: 'scatter',
  },
  '= ANY over nodes': {
    sql: "select id, score from accounts where id = any('{11,12,13,14,15}')",
    route: 'scatter',
  },
  'uuid table': { sql: 'select id, kind from devices where seq < 50', route: 'scatter' },
  'text key table': { sql: "select w, n from words where tag = 'g1'", route: 'scatter' },
  'int key range': {
    sql: 'select k, v from counters where k between -10 and 10',
    route: 'scatter',
  },
  'non-key OR filter': {
    sql: "select id from accounts where grp = 'g1' or score > 100",
    route: 'scatter',
  },
  'NULL key filter': { sql: 'select * from accounts where id is null', route: 'scatter' },
  'empty table': { sql: 'select * from empties', route: 'scatter' },
  'empty result': { sql: 'select id from accounts where score > 100000', route: 'scatter' },
  // ORDER BY, LIMIT, OFFSET.
  'order by key': {
    sql: 'select id, name from accounts order by id',
    route: 'scatter',
    ordered: true,
  },
  'order by key desc limit': {
    sql: 'select id from accounts order by id desc limit 7',
    route: 'scatter',
    ordered: true,
  },
  'order by text then key': {
    sql: 'select id, name from accounts order by name, id',
    route: 'scatter',
    ordered: true,
  },
  'NULLs sort last by default': {
    sql: 'select id, score from accounts order by score, id',
    route: 'scatter',
    ordered: true,
  },
  'NULLS FIRST': {
    sql: 'select id, grp from accounts order by grp nulls first, id',
    route: 'scatter',
    ordered: true,
  },
  'DESC NULLS LAST': {
    sql: 'select id, amount from accounts order by amount desc nulls last, id',
    route: 'scatter',
    ordered: true,
  },
  'DESC puts NULLs first': {
    sql: 'select id, flag from accounts order by flag desc, id limit 40',
    route: 'scatter',
    ordered: true,
  },
  'hidden sort column': {
    sql: 'select name from accounts order by created, id',
    route: 'scatter',
    ordered: true,
  },
  'limit offset': {
    sql: 'select id from accounts order by id limit 10 offset 25',
    route: 'scatter',
    ordered: true,
  },
  'offset past the end': {
    sql: 'select id from accounts order by id offset 100000',
    route: 'scatter',
    ordered: true,
  },
  'limit 0': {
    sql: 'select id from accounts order by id limit 0',
    route: 'scatter',
    ordered: true,
  },
  'order by uuid': {
    sql: 'select id, seq from devices order by id',
    route: 'scatter',
    ordered: true,
  },
  'order by float with NULLs': {
    sql: 'select seq, reading from devices order by reading nulls first, seq',
    route: 'scatter',
    ordered: true,
  },
  'order by date': {
    sql: 'select id, created from accounts order by created desc, id limit 30',
    route: 'scatter',
    ordered: true,
  },
  // Aggregates.
  'count star': { sql: 'select count(*) from accounts', route: 'scatter' },
  'count column skips NULLs': {
    sql: 'select count(score), count(grp) from accounts',
    route: 'scatter',
  },
  'sum int': { sql: 'select sum(score) from accounts', route: 'scatter' },
  'sum bigint key': { sql: 'select sum(id) from accounts', route: 'scatter' },
  'sum numeric': { sql: 'select sum(amount) from accounts', route: 'scatter' },
  'min max int': { sql: 'select min(score), max(score) from accounts', route: 'scatter' },
  'min max text': { sql: 'select min(name), max(name) from accounts', route: 'scatter' },
  'min max date': { sql: 'select min(created), max(created) from accounts', route: 'scatter' },
  'min max uuid key': { sql: 'select min(seq), max(seq) from devices', route: 'scatter' },
  'avg int': { sql: 'select avg(score) from accounts', route: 'scatter' },
  'avg numeric': { sql: 'select avg(amount) from accounts', route: 'scatter' },
  'bool_and bool_or': {
    sql: 'select bool_and(flag), bool_or(flag) from accounts',
    route: 'scatter',
  },
  'count distinct': {
    sql: 'select count(distinct grp), count(distinct region) from accounts',
    route: 'scatter',
  },
  'aggregates of empty table': {
    sql: 'select count(*), sum(v), min(t), max(v), avg(v), bool_and(v > 0), count(distinct t) from empties',
    route: 'scatter',
  },
  'aggregates with no matching row': {
    sql: 'select count(*), sum(score), avg(amount), max(name) from accounts where score > 100000',
    route: 'scatter',
  },
  'aggregate filter clause': {
    sql: 'select count(*) filter (where flag), sum(score) filter (where grp is null) from accounts',
    route: 'scatter',
  },
  // GROUP BY, HAVING.
  'group by NULL-heavy column': {
    sql: 'select grp, count(*), sum(score), avg(amount) from accounts group by grp order by grp nulls first',
    route: 'scatter',
    ordered: true,
  },
  'group by expression': {
    sql: 'select score % 3 as m, count(*) from accounts group by score % 3 order by 1',
    route: 'scatter',
    ordered: true,
  },
  'group by two columns': {
    sql: 'select grp, flag, count(*), max(score) from accounts group by grp, flag',
    route: 'scatter',
  },
  having: {
    sql: 'select region, count(*) from accounts group by region having count(*) > 40 order by region',
    route: 'scatter',
    ordered: true,
  },
  'having matches no group': {
    sql: 'select grp, count(*) from accounts group by grp having count(*) > 100000',
    route: 'scatter',
  },
  'group by over empty result': {
    sql: 'select grp, count(*) from accounts where score > 100000 group by grp',
    route: 'scatter',
  },
  'group order by aggregate limit': {
    sql: 'select status, count(*) as n from orders group by status order by n desc, status nulls first limit 3',
    route: 'scatter',
    ordered: true,
  },
  // DISTINCT.
  distinct: { sql: 'select distinct grp from accounts', route: 'scatter' },
  'distinct ordered': {
    sql: 'select distinct region, flag from accounts order by region nulls first, flag',
    route: 'scatter',
    ordered: true,
  },
  // Joins.
  'colocated join': {
    sql: 'select a.id, o.id, o.qty from accounts a join orders o on a.id = o.account_id',
    route: 'scatter',
  },
  'colocated left join': {
    sql: 'select a.id, o.id from accounts a left join orders o on a.id = o.account_id order by a.id, o.id',
    route: 'scatter',
    ordered: true,
  },
  'colocated join aggregate': {
    sql: 'select a.grp, count(*), sum(o.qty), max(o.price) from accounts a join orders o on a.id = o.account_id group by a.grp',
    route: 'scatter',
  },
  'reference join': {
    sql: 'select a.id, g.name from accounts a join regions g on g.code = a.region',
    route: 'scatter',
  },
  'reference subquery in WHERE': {
    sql: 'select id from accounts where region in (select code from regions where rank > 1)',
    route: 'scatter',
  },
  'union across nodes': {
    sql: 'select id from accounts union select account_id from orders',
    route: 'scatter',
  },
  'union across keyspaces': {
    sql: 'select id from accounts union all select k from counters',
    route: 'scatter',
  },
  'CTE pinned to one key': {
    sql: 'with x as (select * from orders where account_id = 7) select count(*), sum(qty) from x',
    route: 'single',
  },
  'subquery in FROM pinned to one key': {
    sql: 'select count(*) from (select distinct qty from orders where account_id = 12) s',
    route: 'single',
  },
  // Refused, with a sentence.
  'window across nodes': {
    sql: 'select id, row_number() over (order by id) from accounts',
    route: 'refuse',
  },
  'subquery over sharded table': {
    sql: 'select id from accounts where id in (select account_id from orders where qty > 10)',
    route: 'refuse',
  },
  'join not on the key': {
    sql: 'select a.id from accounts a join orders o on a.score = o.qty',
    route: 'refuse',
  },
  'sharded join global': {
    sql: 'select a.id from accounts a join settings_g s on s.k = a.grp',
    route: 'refuse',
  },
  'string_agg across nodes': { sql: "select string_agg(name, ',') from accounts", route: 'refuse' },
  'DISTINCT ON across nodes': {
    sql: 'select distinct on (grp) grp, id from accounts order by grp, id',
    route: 'refuse',
  },
  'reference left join sharded': {
    sql: 'select g.code, a.id from regions g left join accounts a on a.region = g.code',
    route: 'refuse',
  },
};
