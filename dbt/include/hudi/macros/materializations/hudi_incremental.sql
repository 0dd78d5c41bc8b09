{#-- materialized='hudi_incremental': the model's rows written to an Apache Hudi table by hudi_engine.
     First run and --full-refresh: bulk_insert (an existing table gets a new version with insert_overwrite_table,
     so time travel to the old data keeps working until it is cleaned); later runs: incremental_strategy.
     Settings are validated before anything runs; adapter.hudi_write does the write and registers the catalog
     table; its response (instant, operation, rows) becomes the model's adapter_response. --#}
{% materialization hudi_incremental, adapter='hudi', supported_languages=['sql'] %}
  {%- set model_name = model['name'] -%}
  {%- set settings = hudi_model_settings() -%}
  {%- do adapter.hudi_validate_config(settings, model_name) -%}

  {%- set existing_relation = load_cached_relation(this) -%}
  {%- set mode = hudi_write_mode(existing_relation, should_full_refresh()) -%}
  {%- set target_relation = this.incorporate(type='table', is_hudi=true) -%}
  {%- set grant_config = config.get('grants') -%}

  {{ run_hooks(pre_hooks, inside_transaction=False) }}
  {{ run_hooks(pre_hooks, inside_transaction=True) }}

  {%- if hudi_must_drop(existing_relation) -%}
    {%- do adapter.drop_relation(existing_relation) -%}
  {%- endif -%}

  {%- set response = adapter.hudi_write(target_relation, compiled_code, settings, mode, model_name) -%}
  {%- do store_result('main', response=response) -%}

  {{ run_hooks(post_hooks, inside_transaction=True) }}
  {{ run_hooks(post_hooks, inside_transaction=False) }}

  {%- set should_revoke = should_revoke(existing_relation, full_refresh_mode=(mode != 'incremental')) -%}
  {%- do apply_grants(target_relation, grant_config, should_revoke) -%}

  {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}
