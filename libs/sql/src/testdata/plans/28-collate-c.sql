select name from t order by name collate "C"
