select name from t group by name order by coalesce(sum(score), 0) desc, name limit 5
