select id, row_number() over () from t
