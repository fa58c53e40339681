select count(*) from (select id from t order by id limit 10) s
