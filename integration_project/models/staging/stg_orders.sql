-- The order lines that have arrived by the simulated day (a line may arrive again, updated, on a later day).
select order_id, line_no, customer_id, order_date, status, amount, updated_at, day
from {{ ref('raw_orders') }}
where day <= {{ var('day') }}
