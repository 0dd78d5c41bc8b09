-- insert_overwrite replaced exactly the touched dates: every date's revenue equals the sum over orders.
with expected as (
  select o.order_date, c.country, sum(o.amount) as revenue
  from {{ ref('orders') }} o join {{ ref('customers') }} c on o.customer_id = c.customer_id
  group by o.order_date, c.country
)
select coalesce(e.order_date, r.order_date) as order_date, e.revenue as expected, r.revenue as actual
from expected e full outer join {{ ref('daily_revenue') }} r
  on e.order_date = r.order_date and e.country = r.country
where e.revenue is null or r.revenue is null or e.revenue <> r.revenue
