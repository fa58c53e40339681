select name from t group by name order by count(*) desc, name
