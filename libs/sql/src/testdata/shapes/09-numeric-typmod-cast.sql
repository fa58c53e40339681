select avg(score)::numeric(10, 2), nullif(count(*), 0) from t
