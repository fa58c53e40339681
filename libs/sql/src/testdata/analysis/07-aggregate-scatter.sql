select status, count(*), sum(amount) from orders group by status having count(*) > 10 order by 2 desc
