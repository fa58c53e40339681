select id from t where name in (select code from r where since < localtimestamp)
