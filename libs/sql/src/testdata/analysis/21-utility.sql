lock table orders in share mode; declare c cursor with hold for select * from orders where tenant_id = 1; fetch 10 from c; close c; do $$begin perform 1; end$$; call refresh_stats(1)
