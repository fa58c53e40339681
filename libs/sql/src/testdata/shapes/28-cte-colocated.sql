with x as (select id, name from t where score > 3) select name, count(*) from x group by name
