select name, count(*) from t group by name having sum(score) / count(*) > 3
