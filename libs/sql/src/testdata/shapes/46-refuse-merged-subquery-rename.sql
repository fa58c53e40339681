select n as m from (select x, count(*) as n from t group by x) v
