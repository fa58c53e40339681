select id, random() from t
