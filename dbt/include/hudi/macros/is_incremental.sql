{#-- dbt's is_incremental(), also for Hudi models (materialized='hudi_incremental', or 'incremental' with
     file_format='hudi'): true when the model's Hudi table exists, no full refresh is asked and the table is not the
     empty build of `dbt run --empty` (the next normal run builds that in full). (Overrides the core macro: adapter
     macros win over dbt's own.) --#}
{% macro is_incremental() %}
  {%- if not execute -%}
    {{- return(False) -}}
  {%- else -%}
    {%- set relation = adapter.get_relation(this.database, this.schema, this.table) -%}
    {%- if hudi_is_hudi_model(model.config) -%}
      {%- set empty_build = relation is not none and relation.is_hudi and adapter.hudi_is_empty_build(relation) -%}
      {{- return(hudi_write_mode(relation, should_full_refresh() or empty_build
                                 or model.config.materialized == 'table') == 'incremental') -}}
    {%- else -%}
      {{- return(relation is not none
                 and relation.type == 'table'
                 and model.config.materialized == 'incremental'
                 and not should_full_refresh()) -}}
    {%- endif -%}
  {%- endif -%}
{% endmacro %}
