select sum(score) / count(*) from t
