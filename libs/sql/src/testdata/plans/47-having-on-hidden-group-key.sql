select count(*) from t group by name having name is not null
