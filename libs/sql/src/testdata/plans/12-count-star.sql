select count(*) from t
