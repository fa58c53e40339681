select code from r union all select name from t
