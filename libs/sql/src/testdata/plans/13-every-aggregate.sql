select count(*), count(score), sum(score), min(name), max(score), avg(score), bool_and(active), bool_or(active) from t
