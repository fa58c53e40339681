with x as (select id from t) select * from x
