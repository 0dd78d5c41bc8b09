-- Microbatch in dbt-spark's spelling (materialized='incremental', file_format='hudi'): dbt runs one batch per day
-- of `updated_at` (run.sh passes --event-time-start/--event-time-end for the simulated day) and each batch is one
-- Hudi instant, an upsert by the record key. raw_orders declares event_time, so dbt filters it to each batch.
{{ config(
    materialized='incremental',
    file_format='hudi',
    incremental_strategy='microbatch',
    event_time='updated_at',
    batch_size='day',
    begin='2024-03-01',
    unique_key=['order_id', 'line_no'],
    options={'type': 'mor', 'preCombineField': 'updated_at'},
) }}

select order_id, line_no, status, amount, updated_at, cast(updated_at as date) as activity_day
from {{ ref('raw_orders') }}
