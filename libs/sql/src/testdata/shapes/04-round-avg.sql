select name, round(avg(score), 2) from t group by name
