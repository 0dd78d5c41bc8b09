-- Every Hudi table's timeline in one table (hudi_timeline() is the timeline as a relation).
{{ config(materialized='table') }}

{% set hudi_models = ['orders', 'customers', 'open_order_lines', 'daily_revenue', 'order_lines_enriched'] %}
{% for name in hudi_models %}
select '{{ name }}' as table_name, t.* from {{ hudi_timeline(ref(name)) }} t
{% if not loop.last %}union all{% endif %}
{% endfor %}
