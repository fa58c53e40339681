select * from users where id = null and name = E'it''s' and uid = '6f1c1e3a-8b1f-4a51-9f0e-2b7e1b9c0d11'::uuid and n = cast('-12' as int8) and flag = any('{1,2,"3"}')
