select id from t union select id from u
