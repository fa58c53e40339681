select distinct count(*) from t group by name
