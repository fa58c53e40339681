select id from t union all select id from u order by 1 limit 3
