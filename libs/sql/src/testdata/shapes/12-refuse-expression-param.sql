select sum(score) + $1 from t
