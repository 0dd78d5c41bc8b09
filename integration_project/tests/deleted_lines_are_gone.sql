-- Cancelled order lines are deleted from open_order_lines; every other line of orders is still there.
with expected as (
  select o.order_id, o.line_no from {{ ref('orders') }} o
  left anti join (select * from {{ ref('cancellations') }} where day <= {{ var('day') }}) c
    on o.order_id = c.order_id and o.line_no = c.line_no
)
(select order_id, line_no from expected except select order_id, line_no from {{ ref('open_order_lines') }})
union all
(select order_id, line_no from {{ ref('open_order_lines') }} except select order_id, line_no from expected)
