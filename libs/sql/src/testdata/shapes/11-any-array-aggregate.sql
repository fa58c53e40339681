select count(*) from t where id = any(array[1, 2]) and name <> 'x'
