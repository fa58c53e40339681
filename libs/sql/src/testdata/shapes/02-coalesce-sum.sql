select coalesce(sum(score), 0) as total from t
