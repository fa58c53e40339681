select score % 4, (score % 4) * count(*) from t group by score % 4
