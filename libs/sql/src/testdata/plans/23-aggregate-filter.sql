select count(*) filter (where active), sum(score) filter (where score > 0) from t
