-- open_order_lines holds the order lines of day 1 minus every line cancelled so far: the cancelled lines are
-- deleted (delete blocks in its merge-on-read log files), all others are still there.
with expected as (
  select o.order_id, o.line_no from {{ ref('raw_orders') }} o
  left anti join (select * from {{ ref('cancellations') }} where day <= {{ var('day') }}) c
    on o.order_id = c.order_id and o.line_no = c.line_no
  where o.day = 1
  group by o.order_id, o.line_no
)
(select order_id, line_no from expected except select order_id, line_no from {{ ref('open_order_lines') }})
union all
(select order_id, line_no from {{ ref('open_order_lines') }} except select order_id, line_no from expected)
