select id from t where created > now() - interval '1 day'
