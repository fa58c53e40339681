select id from t where name = '__tessera_transaction_time__' and created < now()
