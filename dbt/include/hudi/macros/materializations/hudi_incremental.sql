{#-- materialized='hudi_incremental': the model's rows written to an Apache Hudi table by hudi_engine.
     First run and --full-refresh: bulk_insert (an existing table gets a new version with insert_overwrite_table,
     so time travel to the old data keeps working until it is cleaned); later runs: incremental_strategy.
     Settings are validated before anything runs; an enforced contract is checked (columns and types by dbt, then
     not_null / check constraints on the rows) before anything is written; adapter.hudi_write does the write and
     registers the catalog table; its response (instant, operation, rows) becomes the model's adapter_response.
     SQL and Python models (`def model(dbt, session)`, method: session) alike. --#}
{% materialization hudi_incremental, adapter='hudi', supported_languages=['sql', 'python'] %}
  {{ return(hudi_materialization()) }}
{% endmaterialization %}


{#-- dbt-spark's spelling: materialized='incremental' with file_format='hudi' goes through the same path (strategies
     merge, append, insert_overwrite, microbatch); other file formats stay dbt-spark's. dbt runs microbatch models
     batch by batch only for materialized='incremental': each batch is one call here, one Hudi instant. --#}
{% materialization incremental, adapter='hudi', supported_languages=['sql', 'python'] %}
  {%- if config.get('file_format') == 'hudi' -%}
    {{ return(hudi_materialization()) }}
  {%- else -%}
    {{ return(materialization_incremental_spark()) }}
  {%- endif -%}
{% endmaterialization %}


{#-- dbt-spark's materialized='table' with file_format='hudi': every run rebuilds the table, one Hudi instant:
     bulk_insert when there is none, else insert_overwrite_table (a new version of the whole table; time travel to
     the old one works until the cleaner removes it). Other file formats stay dbt-spark's. --#}
{% materialization table, adapter='hudi', supported_languages=['sql', 'python'] %}
  {%- if config.get('file_format') == 'hudi' -%}
    {{ return(hudi_materialization()) }}
  {%- else -%}
    {{ return(materialization_table_spark()) }}
  {%- endif -%}
{% endmaterialization %}


{% macro hudi_materialization() %}
  {%- set model_name = model['name'] -%}
  {%- set language = model['language'] -%}
  {%- set settings = hudi_model_settings() -%}
  {%- do adapter.hudi_validate_config(settings, model_name) -%}

  {%- set existing_relation = load_cached_relation(this) -%}
  {%- set empty_build = existing_relation is not none and existing_relation.is_hudi
                        and adapter.hudi_is_empty_build(existing_relation) -%}
  {%- set mode = hudi_write_mode(existing_relation, should_full_refresh() or empty_build
                                 or model.config.materialized == 'table') -%}
  {%- set target_relation = this.incorporate(type='table', is_hudi=true) -%}
  {%- set grant_config = config.get('grants') -%}

  {#-- An enforced contract: dbt's own column and type check, the columns in the contract's order, and the
       constraints Hudi can enforce on the rows (checked before the write). --#}
  {%- set code = compiled_code -%}
  {%- set contract = none -%}
  {%- if config.get('contract').enforced -%}
    {%- if language == 'sql' -%}
      {{ get_assert_columns_equivalent(compiled_code) }}
      {%- set code = get_select_subquery(compiled_code) -%}
    {%- endif -%}
    {%- set contract = {'columns': model['columns'], 'constraints': model.get('constraints') or []} -%}
  {%- endif -%}

  {{ run_hooks(pre_hooks, inside_transaction=False) }}
  {{ run_hooks(pre_hooks, inside_transaction=True) }}

  {%- if hudi_must_drop(existing_relation) -%}
    {%- do adapter.drop_relation(existing_relation) -%}
  {%- endif -%}

  {%- set response = adapter.hudi_write(target_relation, code, settings, mode, model_name, language, contract,
                                        flags.EMPTY) -%}
  {%- do store_result('main', response=response) -%}

  {{ run_hooks(post_hooks, inside_transaction=True) }}
  {{ run_hooks(post_hooks, inside_transaction=False) }}

  {%- set should_revoke = should_revoke(existing_relation, full_refresh_mode=(mode != 'incremental')) -%}
  {%- do apply_grants(target_relation, grant_config, should_revoke) -%}
  {%- do persist_docs(target_relation, model) -%}

  {{ return({'relations': [target_relation]}) }}
{% endmacro %}
