select id from t where code in (select code from r where active)
