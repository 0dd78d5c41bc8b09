{#-- The timeline of a Hudi model's table as a relation: one row per instant (instant, action, state,
     operation, num_inserts, num_updates, num_deletes, num_writes, files_written, log_files_written,
     partitions_written, file_groups_replaced, bytes_written). Use it in a model or an analysis:
       select * from {{ hudi_timeline(ref('orders')) }} where state = 'COMPLETED'
     or with a table path: {{ hudi_timeline('/data/orders') }}. --#}
{% macro hudi_timeline(relation_or_path) %}
  {%- if relation_or_path is string -%}
    {%- set path = relation_or_path -%}
  {%- elif execute -%}
    {%- set path = adapter.hudi_table_location(relation_or_path) -%}
  {%- else -%}
    {%- set path = '' -%}
  {%- endif -%}
  hudi_timeline('{{ path | replace("\\", "\\\\") | replace("'", "\\'") }}')
{%- endmacro %}

{#-- Completed instants that write data: what "commits" means for the tests below. --#}
{% macro hudi_commit_actions() %}
  {{- return(['commit', 'deltacommit', 'replacecommit']) -}}
{% endmacro %}
