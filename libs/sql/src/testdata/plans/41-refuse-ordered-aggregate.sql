select sum(score order by id) from t
