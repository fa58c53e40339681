select name from t group by name having sum(score) <> 0
