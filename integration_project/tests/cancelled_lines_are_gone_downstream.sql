-- open_order_lines_mirror, built from open_order_lines' CDC query, holds exactly the upstream's lines: a line
-- cancelled (deleted upstream) on day 2 is gone from the mirror after day 2's run, though an incremental pull would
-- never have shown the delete.
(select order_id, line_no, status, amount from {{ ref('open_order_lines') }}
 except select order_id, line_no, status, amount from {{ ref('open_order_lines_mirror') }})
union all
(select order_id, line_no, status, amount from {{ ref('open_order_lines_mirror') }}
 except select order_id, line_no, status, amount from {{ ref('open_order_lines') }})
union all
(select m.order_id, m.line_no, m.status, m.amount from {{ ref('open_order_lines_mirror') }} m
 join (select * from {{ ref('cancellations') }} where day <= {{ var('day') }}) c
   on m.order_id = c.order_id and m.line_no = c.line_no)
