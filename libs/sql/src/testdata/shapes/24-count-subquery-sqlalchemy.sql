select count(*) as count_1 from (select t.id as t_id, t.name as t_name from t where t.score > 5) as anon_1
