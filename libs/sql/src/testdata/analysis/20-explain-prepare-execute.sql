explain (analyze, buffers) select * from users where id = 5; prepare get_user (bigint) as select * from users where id = $1; execute get_user (5); deallocate get_user
