// The statements of the binary-format differential test (binary.test.ts), over binary-data.ts's
// tables: every plan shape the planner answers, every type as an ORDER BY key, a GROUP BY and
// DISTINCT key, under every aggregate, and columns only passed on.
import {
  EXTREME_COLUMNS,
  GROUPED_COLUMNS,
  NUMERIC_COLUMNS,
  ORDERED_COLUMNS,
} from './binary-data.js';

export interface Query {
  readonly sql: string;
  /** The ORDER BY is total: rows compared in order, else as multisets. */
  readonly ordered: boolean;
}

const q = (sql: string, ordered = true): Query => ({ sql, ordered });

function orderBy(): Query[] {
  const out: Query[] = [q('select * from wide order by id')];
  for (const c of ORDERED_COLUMNS)
    out.push(
      q(`select id, ${c} from wide order by ${c}, id`),
      q(`select ${c}, g from wide order by ${c} desc nulls last, id desc limit 30 offset 2`),
      q(`select id from wide order by ${c} nulls first, id`),
    );
  for (const c of ['f8', 'n', 'iv', 'jb', 'tz'])
    out.push(
      q(`select id, ${c} from tricky order by ${c}, id`),
      q(`select ${c}, id from tricky order by ${c} desc, id`),
    );
  return out;
}

function grouped(): Query[] {
  const out: Query[] = [];
  for (const c of GROUPED_COLUMNS)
    out.push(
      q(`select ${c}, count(*) from wide group by ${c}`, false),
      q(`select distinct ${c} from wide`, false),
      q(`select count(*), min(id) from wide group by ${c}`, false),
    );
  out.push(
    q('select distinct g, b, ch from wide order by g, b, ch'),
    q('select count(*) from (select distinct t from wide) s'),
    q(
      'select count(distinct f8), count(distinct n), count(distinct iv), count(distinct jb), count(distinct tz) from tricky',
    ),
    q('select count(*) from tricky group by iv', false),
    q('select count(*) from tricky group by jb', false),
    q('select count(*) from tricky group by n', false),
  );
  return out;
}

function aggregates(): Query[] {
  const out: Query[] = [];
  for (const c of NUMERIC_COLUMNS)
    out.push(
      q(`select count(*), count(${c}), sum(${c}), avg(${c}), min(${c}), max(${c}) from wide`),
      q(
        `select g, count(${c}), sum(${c}), avg(${c}), min(${c}), max(${c}) from wide group by g order by g`,
      ),
    );
  for (const c of EXTREME_COLUMNS)
    out.push(
      q(`select min(${c}), max(${c}) from wide`),
      q(`select g, min(${c}), max(${c}) from wide group by g order by g`),
    );
  out.push(
    q('select min(f8), max(f8), min(n), max(n), min(tz), max(tz) from tricky'),
    q(
      'select g, bool_and(b), bool_or(b), count(distinct t), count(distinct iv), count(distinct u) from wide group by g order by g',
    ),
    q(
      `select g, count(*)::int, coalesce(sum(i8), 0), round(avg(nm), 2), sum(i4) / count(*),
         max(i4) / 2 - min(i4) / 2 + 1, (count(*) * 2)::int2, sum(nm)::numeric(20, 1), count(*)::text
       from wide group by g order by g`,
    ),
    q('select count(*)::int4, sum(i2), avg(i2)::numeric(10, 3) from wide where g > 10'),
    q(
      `select g, count(*) from wide group by g
       having count(*) > 10 and max(d) > '2000-01-01' and sum(nm) > -1000 order by g`,
    ),
    q(
      `select g, min(tz) from wide group by g having min(tz) < '2000-01-01 00:00:00+00' order by g`,
    ),
    q('select g, sum(i4) from wide group by g order by sum(i4) desc, g limit 3'),
  );
  return out;
}

function shapes(): Query[] {
  return [
    q(
      'select s.id, s.x, s.t from (select id, i8 / 2 as x, t from wide where g < 3) s order by s.id',
    ),
    q(
      'select id, t from wide where g = 1 union all select id, vc from wide where g = 2 order by 1, 2',
    ),
    q('select t from wide union select vc from wide', false),
    q('select g, d from wide union select g + 10, d from wide order by 1, 2'),
    q('select w.id, w.g, r.label, w.jb from wide w join ref r on r.code = w.g order by w.id'),
    q('select id, arr, tarr, row(i4, t, d), ip, r, j from wide order by id'),
    q('select id, arr, ip from wide where g = 2', false),
    q('select count(*) from wide where ts < now()'),
    q(
      "select id, current_date - d from wide where d between '1990-01-01' and current_date order by id",
    ),
    q('select id, by, u, ch from wide order by u limit 5'),
  ];
}

export function queries(): Query[] {
  return [...orderBy(), ...grouped(), ...aggregates(), ...shapes()];
}
