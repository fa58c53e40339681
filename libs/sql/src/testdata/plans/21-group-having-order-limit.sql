select name, avg(score) as a from t group by name having count(*) >= 2 order by a desc nulls last, name limit 3 offset 1
