select s.id, s.n from (select id, count(*) as n from t group by id) s where s.n > 1 order by s.id limit 5
