-- Merge-on-read with PartialUpdateAvroPayload: an update row carries only what changed; its null columns keep
-- the stored values when readers merge the log files with the base file.
{{ config(
    unique_key='customer_id',
    precombine_field='updated_at',
    table_type='mor',
    payload_class='PartialUpdateAvroPayload',
) }}

{% if is_incremental() %}
select customer_id, name, email, country, tier, updated_at
from {{ ref('customer_updates') }}
where day = {{ var('day') }}
{% else %}
select customer_id, name, email, country, tier, updated_at from {{ ref('raw_customers') }}
union all
select customer_id, name, email, country, tier, updated_at
from {{ ref('customer_updates') }}
where day <= {{ var('day') }}
{% endif %}
