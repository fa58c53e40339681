select id::text from t union all select code from r
