-- dbt snapshot stored as a Hudi table (record key dbt_scd_id): the SCD2 history of the customers table (itself a
-- merge-on-read Hudi table). Day 2 changes customers 2 and 4 and adds 7: their old versions get a dbt_valid_to.
{% snapshot customers_history %}
{{ config(unique_key='customer_id', strategy='timestamp', updated_at='updated_at', hard_deletes='invalidate') }}
select customer_id, name, email, country, tier, updated_at from {{ ref('customers') }}
{% endsnapshot %}
