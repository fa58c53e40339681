with recursive x(n) as (select 1 union all select n + 1 from x where n < 3) select * from t join x on x.n = t.id
