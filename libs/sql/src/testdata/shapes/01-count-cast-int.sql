select count(*)::int from t
