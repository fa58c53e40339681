select name, count(*) from t group by name having count(*) > 1 and (max(score) >= 10 or min(score) is null)
