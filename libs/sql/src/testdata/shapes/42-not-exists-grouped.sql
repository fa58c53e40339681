select not exists (select name from t group by name having count(*) > 1)
