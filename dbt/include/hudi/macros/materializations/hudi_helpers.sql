{#-- Small steps of the hudi_incremental materialization. Plain Jinja (no dbt blocks), so they are unit-tested
     by rendering this file with a faked `config`. --#}

{#-- The model's Hudi settings, as one dict for adapter.hudi_validate_config / adapter.hudi_write. The dbt-spark
     spelling (materialized='incremental', file_format='hudi') adds its options / tblproperties. --#}
{% macro hudi_model_settings() %}
  {%- set settings = {} -%}
  {%- for key in ['unique_key', 'partition_by', 'precombine_field', 'table_type', 'payload_class',
                  'incremental_strategy', 'index_type', 'location_root', 'hudi_options', 'on_schema_change',
                  'merge_update_columns', 'merge_exclude_columns', 'compaction', 'cleaning', 'clustering', 'hive_sync',
                  'glue_sync', 'cdc_enabled', 'cdc_mode', 'change_type_column', 'table_version', 'metadata_table',
                  'column_stats', 'record_index', 'incremental_predicates', 'predicates',
                  'materialized', 'options', 'tblproperties'] -%}
    {%- do settings.update({key: config.get(key)}) -%}
  {%- endfor -%}
  {{- return(settings) -}}
{% endmacro %}


{#-- How this run writes: 'create' when the catalog has no Hudi table for the model (first run, or a relation of
     another kind that is dropped first), 'full_refresh' when asked to rebuild, else 'incremental'. --#}
{% macro hudi_write_mode(existing_relation, full_refresh) %}
  {%- if existing_relation is none or not existing_relation.is_hudi or existing_relation.type != 'table' -%}
    {{- return('create') -}}
  {%- elif full_refresh -%}
    {{- return('full_refresh') -}}
  {%- else -%}
    {{- return('incremental') -}}
  {%- endif -%}
{% endmacro %}


{#-- True when the model's existing relation must be dropped before the Hudi table is registered under its name. --#}
{% macro hudi_must_drop(existing_relation) %}
  {{- return(existing_relation is not none and (not existing_relation.is_hudi or existing_relation.type != 'table')) -}}
{% endmacro %}


{#-- Whether this model writes a Hudi table: materialized='hudi_incremental', or dbt-spark's
     materialized='incremental' or 'table' with file_format='hudi'. --#}
{% macro hudi_is_hudi_model(model_config) %}
  {{- return(model_config.get('materialized') == 'hudi_incremental'
             or (model_config.get('materialized') in ('incremental', 'table')
                 and model_config.get('file_format') == 'hudi')) -}}
{% endmacro %}
