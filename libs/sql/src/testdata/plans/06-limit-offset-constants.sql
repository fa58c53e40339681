select id from t order by id limit 10 offset 20
