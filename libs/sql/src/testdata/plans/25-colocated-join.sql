select t.id, u.total from t join u on t.id = u.id order by u.total
