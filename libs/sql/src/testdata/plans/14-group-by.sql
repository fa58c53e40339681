select name, count(*) as n from t group by name
