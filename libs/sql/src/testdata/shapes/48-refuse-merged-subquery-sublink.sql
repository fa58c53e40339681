select * from (select x, count(*) as n from t group by x) v where n > (select 1)
