select name, max(created) from t group by name having max(created) < now() and min(created) > date '2020-01-01'
