select distinct name from t order by score
