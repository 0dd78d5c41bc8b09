-- Hudi's incremental pull: only the order lines that commits to `orders` wrote since this table's last run. The
-- upstream commit time is kept as `source_commit_time`; hudi_table_changes reads only the file slices of `orders`
-- that the commits after it wrote (base files through Spark's own parquet reader). `select o.*` brings the meta
-- columns of `orders` along; the engine writes its own.
{{ config(
    unique_key=['order_id', 'line_no'],
    precombine_field='updated_at',
    partition_by='order_date',
) }}

select o.*, o._hoodie_commit_time as source_commit_time, c.name as customer_name, c.tier as customer_tier
from {% if is_incremental() %}
       {{ hudi_table_changes(ref('orders'), hudi_max_value(this, 'source_commit_time', 'earliest')) }}
     {% else %}
       {{ ref('orders') }}
     {% endif %} o
join {{ ref('customers') }} c on o.customer_id = c.customer_id
