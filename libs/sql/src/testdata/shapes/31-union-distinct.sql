select name from t union select name from u
