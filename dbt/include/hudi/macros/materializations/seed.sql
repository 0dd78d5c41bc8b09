{#-- `dbt seed` with file_format='hudi': the CSV's rows written as a Hudi table in one instant (bulk_insert the first
     time, insert_overwrite_table on every later seed, so the table keeps its timeline), typed as dbt-spark types a
     seed (column_types win); keys and layout from unique_key / partition_by / options like a table model (without
     a key the seed is a keyless table). A Hudi seed takes Spark SQL's UPDATE / DELETE / MERGE. Other file formats
     are dbt-spark's seeds. --#}
{% materialization seed, adapter='hudi' %}
  {%- if config.get('file_format') == 'hudi' -%}
    {{ return(hudi_seed_materialization()) }}
  {%- else -%}
    {{ return(materialization_seed_default()) }}
  {%- endif -%}
{% endmaterialization %}


{% macro hudi_seed_materialization() %}
  {%- set model_name = model['name'] -%}
  {%- set settings = hudi_model_settings() -%}
  {#-- a seed is rebuilt by every run, like a table model: the same settings and translation --#}
  {%- do settings.update({'materialized': 'table'}) -%}
  {%- do adapter.hudi_validate_config(settings, model_name) -%}

  {%- set existing_relation = load_cached_relation(this) -%}
  {%- if existing_relation is not none and existing_relation.is_view -%}
    {{ exceptions.raise_compiler_error("Cannot seed to '{}', it is a view".format(existing_relation.render())) }}
  {%- endif -%}
  {%- set mode = hudi_write_mode(existing_relation, true) -%}
  {%- set target_relation = this.incorporate(type='table', is_hudi=true) -%}
  {%- set grant_config = config.get('grants') -%}
  {%- set agate_table = load_agate_table() -%}
  {%- do store_result('agate_table', response='OK', agate_table=agate_table) -%}

  {{ run_hooks(pre_hooks, inside_transaction=False) }}
  {{ run_hooks(pre_hooks, inside_transaction=True) }}

  {%- if hudi_must_drop(existing_relation) -%}
    {%- do adapter.drop_relation(existing_relation) -%}
  {%- endif -%}
  {%- set response = adapter.hudi_write_seed(target_relation, agate_table, config.get('column_types') or {},
                                             settings, mode, model_name) -%}
  {%- do store_result('main', response=response) -%}

  {%- set should_revoke = should_revoke(existing_relation, full_refresh_mode=true) -%}
  {%- do apply_grants(target_relation, grant_config, should_revoke=should_revoke) -%}
  {%- do persist_docs(target_relation, model) -%}

  {{ run_hooks(post_hooks, inside_transaction=True) }}
  {{ run_hooks(post_hooks, inside_transaction=False) }}

  {{ return({'relations': [target_relation]}) }}
{% endmacro %}
