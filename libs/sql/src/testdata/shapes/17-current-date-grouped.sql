select count(*) from t where created::date = current_date group by name order by name
