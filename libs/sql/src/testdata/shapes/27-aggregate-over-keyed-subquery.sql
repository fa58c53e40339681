select count(*), sum(n) from (select id, count(*) as n from t group by id) s
