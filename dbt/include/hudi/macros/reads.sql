{#-- Incremental pulls from Hudi tables (docs/dbt.md, "Rows changed since this model last ran"; docs/python-api.md for the reads).

     {{ hudi_table_changes(ref('orders'), begin[, end]) }}: the records the commits in (begin, end] wrote to the
     table, each in its state as of end (end: the latest commit when the model runs), as a relation. Only the file
     slices those commits wrote are read, base files by Spark's own parquet reader. begin: an instant time,
     'yyyy-MM-dd HH:mm:ss[.SSS]', 'yyyy-MM-dd' or 'earliest'; on version 8+ a completion time, or a commit's
     requested time (`_hoodie_commit_time`), which names that commit. The first argument may also be a table path.

     Rows changed since this model last ran, with the upstream commit time kept as a column:
       select o.*, o._hoodie_commit_time as source_commit_time
       from {% if is_incremental() %}
              {{ hudi_table_changes(ref('orders'), hudi_max_value(this, 'source_commit_time', 'earliest')) }}
            {% else %} {{ ref('orders') }} {% endif %} o

     {{ hudi_table_changes(ref('orders'), begin, format='cdc') }}: every change the commits in (begin, end] made to
     a table created with cdc_enabled=true, deletes included (Hudi's CDC query): op ('i', 'u', 'd'), ts_ms (the
     commit), before and after (structs of the row's columns; images='json' for Hudi's JSON text). A downstream
     model applies them with change_type_column (docs/dbt.md, "Carrying deletes downstream"). --#}
{% macro hudi_table_changes(relation, begin, end=none, format='latest_state', images='struct') %}
  {%- if execute -%}
    {{- adapter.hudi_table_changes_view(relation, begin, end, format, images) -}}
  {%- else -%}
    {{- relation -}}
  {%- endif -%}
{%- endmacro %}

{#-- The largest value of `column` in `relation` (e.g. the upstream commit time a model last read), `default` when
     the relation has no rows. --#}
{% macro hudi_max_value(relation, column, default=none) %}
  {%- if not execute -%}
    {{- return(default) -}}
  {%- else -%}
    {%- set result = run_query('select max(' ~ adapter.quote(column) ~ ') from ' ~ relation) -%}
    {%- set value = result.columns[0].values()[0] if result.rows | length > 0 else none -%}
    {{- return(default if value is none else value) -}}
  {%- endif -%}
{%- endmacro %}
