select id from t order by id fetch first 3 rows with ties
