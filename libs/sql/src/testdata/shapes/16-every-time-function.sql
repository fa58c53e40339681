select id, now(), current_timestamp, current_timestamp(2), transaction_timestamp(), current_date, current_time(1), localtime, localtimestamp(3) from t
