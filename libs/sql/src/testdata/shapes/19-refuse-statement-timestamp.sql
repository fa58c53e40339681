select id from t where created > statement_timestamp()
