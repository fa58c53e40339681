select n, x from (select x, count(*) as n from t group by x) v where n > 2 order by n desc, 2 limit 3 offset 1
