copy (select * from orders where tenant_id = 9) to stdout with csv header
