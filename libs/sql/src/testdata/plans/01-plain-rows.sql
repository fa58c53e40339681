select id, name from t where id in (1, 2, 3)
