select name, max(score) - min(score) + 1 as spread, count(*) * 2 from t group by name
