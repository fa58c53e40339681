select id, name from t where id = any(array[1, 2, 3])
