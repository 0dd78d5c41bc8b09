-- Carrying deletes downstream (docs/dbt.md): open_order_lines keeps change data (cdc_enabled); this model pulls
-- its changes since the last upstream commit it applied (Hudi's CDC query, deletes included) and applies them in
-- one upsert: rows whose change_type is 'd' delete their key (change_type_column), the others insert or update.
{{ config(
    unique_key=['order_id', 'line_no'],
    precombine_field='source_commit_time',
    change_type_column='change_type',
    incremental_strategy='upsert',
) }}

{% if is_incremental() %}
select op as change_type, ts_ms as source_commit_time, image.*
from (
  select op, ts_ms, case when op = 'd' then before else after end as image
  from {{ hudi_table_changes(ref('open_order_lines'), hudi_max_value(this, 'source_commit_time', 'earliest'),
                             format='cdc') }}
)
{% else %}
select 'i' as change_type, _hoodie_commit_time as source_commit_time, order_id, line_no, customer_id, status, amount
from {{ ref('open_order_lines') }}
{% endif %}
