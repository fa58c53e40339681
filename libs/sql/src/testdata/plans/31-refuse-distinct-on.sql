select distinct on (name) name, id from t
