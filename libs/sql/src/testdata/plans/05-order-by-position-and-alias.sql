select id, name as n, score from t order by 3 desc, n
