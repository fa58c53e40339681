select name, count(distinct score), count(*) from t group by name
