select id from t intersect select id from u
