-- Merge-on-read, strategy delete: the first run loads the open order lines; later runs select the keys of the
-- lines cancelled that day, and Hudi deletes them (delete blocks in the log files). A CDC table: its changes,
-- deletes included, are what open_order_lines_mirror pulls.
{{ config(
    unique_key=['order_id', 'line_no'],
    table_type='mor',
    incremental_strategy='delete',
    cdc_enabled=true,
) }}

{% if is_incremental() %}
select order_id, line_no
from {{ ref('cancellations') }}
where day = {{ var('day') }}
{% else %}
select o.order_id, o.line_no, o.customer_id, o.status, o.amount
from {{ ref('orders') }} o
left anti join (select * from {{ ref('cancellations') }} where day <= {{ var('day') }}) c
  on o.order_id = c.order_id and o.line_no = c.line_no
{% endif %}
