-- insert_overwrite by partition: each run recomputes the order dates that received lines that day and replaces
-- exactly those partitions (a replacecommit); other dates stay as they are.
-- Table version 6 (new tables are 9): this table is shared with jobs on Hudi 0.x, which cannot read version 9.
-- depends_on: {{ ref('stg_orders') }}
{{ config(
    unique_key=['order_date', 'country'],
    partition_by='order_date',
    incremental_strategy='insert_overwrite',
    table_version=6,
) }}

select o.order_date, c.country, sum(o.amount) as revenue, count(*) as order_lines
from {{ ref('orders') }} o
join {{ ref('customers') }} c on o.customer_id = c.customer_id
{% if is_incremental() %}
where o.order_date in (select distinct order_date from {{ ref('stg_orders') }} where day = {{ var('day') }})
{% endif %}
group by o.order_date, c.country
