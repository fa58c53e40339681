select exists (select 1 from t where v > 3) as anon_1
