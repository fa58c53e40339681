select id from t order by id offset 5
