select name, count(*) from t group by rollup (name)
