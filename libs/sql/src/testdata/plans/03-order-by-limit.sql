select id, name from t order by name desc, id limit 10
