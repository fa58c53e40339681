select max(n) from (select name, count(*) as n from t group by name) s
