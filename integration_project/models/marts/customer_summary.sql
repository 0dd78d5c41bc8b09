-- A plain dbt table (dbt-spark, parquet) downstream of two merge-on-read Hudi tables: it sees their merged
-- snapshots (partial updates applied, deleted lines gone).
{{ config(materialized='table') }}

select c.customer_id, c.name, c.email, c.tier, count(l.order_id) as open_lines, coalesce(sum(l.amount), 0) as open_amount
from {{ ref('customers') }} c
left join {{ ref('open_order_lines') }} l on l.customer_id = c.customer_id
group by c.customer_id, c.name, c.email, c.tier
