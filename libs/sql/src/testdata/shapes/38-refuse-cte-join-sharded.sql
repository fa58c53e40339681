with x as (select id from t) select * from x join u on u.id = x.id
