select id from t for update
