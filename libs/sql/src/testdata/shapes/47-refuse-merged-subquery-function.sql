select x, lower(x) from (select x, count(*) as n from t group by x) v
