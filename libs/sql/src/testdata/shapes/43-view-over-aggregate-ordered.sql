select * from (select x, count(*) as n, sum(y) as total from t group by x) v order by x
