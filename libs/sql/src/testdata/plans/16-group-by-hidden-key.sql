select count(*) from t group by name
