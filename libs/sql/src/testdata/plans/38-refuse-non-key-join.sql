select * from t join u on t.code = u.code
