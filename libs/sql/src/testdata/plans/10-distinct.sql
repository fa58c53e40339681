select distinct name from t
