{#-- get_columns_in_relation() as dbt-core defines it: a list of columns (dbt-spark's returns the raw DESCRIBE
     table, so dbt's snapshot staging with hard_deletes='new_record' found no snapshotted column and wrote its
     deletion records with nulls). --#}
{% macro hudi__get_columns_in_relation(relation) -%}
  {{ return(adapter.get_columns_in_relation(relation)) }}
{%- endmacro %}
