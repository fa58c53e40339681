select lower(name), sum(score) from t group by 1
