select v.* from (select distinct y from t) v order by y desc
