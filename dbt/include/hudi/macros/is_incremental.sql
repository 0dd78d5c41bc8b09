{#-- dbt's is_incremental(), also true for materialized='hudi_incremental' when the model's Hudi table exists
     and no full refresh is asked. (Overrides the core macro: adapter macros win over dbt's own.) --#}
{% macro is_incremental() %}
  {%- if not execute -%}
    {{- return(False) -}}
  {%- else -%}
    {%- set relation = adapter.get_relation(this.database, this.schema, this.table) -%}
    {%- if model.config.materialized == 'hudi_incremental' -%}
      {{- return(hudi_write_mode(relation, should_full_refresh()) == 'incremental') -}}
    {%- else -%}
      {{- return(relation is not none
                 and relation.type == 'table'
                 and model.config.materialized == 'incremental'
                 and not should_full_refresh()) -}}
    {%- endif -%}
  {%- endif -%}
{% endmacro %}
