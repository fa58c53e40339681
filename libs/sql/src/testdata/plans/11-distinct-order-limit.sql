select distinct name, score from t order by score desc, name limit 5
