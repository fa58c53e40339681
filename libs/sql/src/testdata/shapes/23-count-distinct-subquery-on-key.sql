select count(*) as n from (select distinct id, name from t where score > 1) s
