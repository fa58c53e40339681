select coalesce(max(name), 'none') from t
