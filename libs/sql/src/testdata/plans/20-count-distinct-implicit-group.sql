select count(distinct name) from t
