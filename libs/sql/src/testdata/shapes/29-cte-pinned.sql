with x as (select id, name from t where id = 64) select * from x join r on r.code = x.name
