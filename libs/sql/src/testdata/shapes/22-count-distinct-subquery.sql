select count(*) from (select distinct name from t) s
