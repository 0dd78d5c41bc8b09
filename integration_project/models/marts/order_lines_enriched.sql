-- Hudi's incremental pull: only the order lines committed to `orders` since this table's last run, read through
-- the `_hoodie_commit_time` meta column. `select o.*` brings the meta columns of `orders` along; the engine
-- writes its own.
{{ config(
    unique_key=['order_id', 'line_no'],
    precombine_field='updated_at',
    partition_by='order_date',
) }}

select o.*, o._hoodie_commit_time as source_commit_time, c.name as customer_name, c.tier as customer_tier
from {{ ref('orders') }} o
join {{ ref('customers') }} c on o.customer_id = c.customer_id
{% if is_incremental() %}
where o._hoodie_commit_time > (select max(source_commit_time) from {{ this }})
{% endif %}
