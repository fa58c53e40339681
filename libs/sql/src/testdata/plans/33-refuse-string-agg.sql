select string_agg(name, ',') from t
