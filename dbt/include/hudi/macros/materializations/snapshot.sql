{#-- `dbt snapshot` stored as a Hudi table (file_format 'hudi', the default of this adapter; other file formats are
     dbt-spark's). The record key is dbt_scd_id. The first run writes dbt's snapshot table (bulk_insert); later
     runs compute dbt's staging rows (strategy timestamp or check, hard_deletes ignore / invalidate / new_record)
     and upsert them in one Hudi instant: new versions are inserted, and on a closed version only dbt_valid_to
     changes (a partial update: merge_update_columns=[dbt_valid_to], the other columns keep their stored values),
     which is exactly dbt's snapshot MERGE. --#}
{% materialization snapshot, adapter='hudi' %}
  {%- if (config.get('file_format') or 'hudi') == 'hudi' -%}
    {{ return(hudi_snapshot_materialization()) }}
  {%- else -%}
    {{ return(materialization_snapshot_spark()) }}
  {%- endif -%}
{% endmaterialization %}


{#-- The Hudi settings of a snapshot: dbt_scd_id as record key, a partial update of dbt_valid_to on a match; the
     snapshot's own table_type / hudi_options / location_root / compaction / cleaning are honoured. --#}
{% macro hudi_snapshot_settings(columns) %}
  {%- set settings = {'unique_key': columns.dbt_scd_id, 'incremental_strategy': 'upsert',
                      'merge_update_columns': [columns.dbt_valid_to], 'on_schema_change': 'append_new_columns'} -%}
  {%- for key in ['table_type', 'hudi_options', 'location_root', 'index_type', 'compaction', 'cleaning'] -%}
    {%- do settings.update({key: config.get(key)}) -%}
  {%- endfor -%}
  {{- return(settings) -}}
{% endmacro %}


{% macro hudi_snapshot_materialization() %}
  {%- set model_name = model['name'] -%}
  {%- set strategy_name = config.get('strategy') -%}
  {%- set unique_key = config.get('unique_key') -%}
  {%- set grant_config = config.get('grants') -%}
  {%- set columns = config.get('snapshot_table_column_names') or get_snapshot_table_column_names() -%}
  {%- set settings = hudi_snapshot_settings(columns) -%}
  {%- do adapter.hudi_validate_config(settings, model_name) -%}

  {%- set existing_relation = load_cached_relation(this) -%}
  {%- if existing_relation is not none and not existing_relation.is_hudi -%}
    {{ exceptions.raise_compiler_error("snapshot " ~ model_name ~ ": " ~ existing_relation ~ " exists and is not a "
       ~ "Hudi table; drop it (the snapshot history in it is not converted), or set file_format to its format.") }}
  {%- endif -%}
  {%- set target_relation = this.incorporate(type='table', is_hudi=true) -%}
  {%- if not adapter.check_schema_exists(model.database, model.schema) -%}
    {%- do create_schema(model.schema) -%}
  {%- endif -%}

  {{ run_hooks(pre_hooks, inside_transaction=False) }}
  {{ run_hooks(pre_hooks, inside_transaction=True) }}

  {#-- The snapshot's source without Hudi meta columns (`select *` of a Hudi table has them): the node the strategy
       sees (check_cols='all' compares the source query's columns) and the SQL both. --#}
  {%- set source_sql = hudi_snapshot_source_sql(model['compiled_code']) -%}
  {%- set node = {} -%}
  {%- do node.update(model) -%}
  {%- do node.update({'compiled_code': source_sql}) -%}
  {%- set strategy_macro = strategy_dispatch(strategy_name) -%}
  {%- set strategy = strategy_macro(node, "snapshotted_data", "source_data", model['config'],
                                    existing_relation is not none) -%}
  {%- if existing_relation is none -%}
    {%- set code = build_snapshot_table(strategy, source_sql) -%}
    {%- set mode = 'create' -%}
  {%- else -%}
    {{ adapter.assert_valid_snapshot_target_given_strategy(existing_relation, columns, strategy) }}
    {#-- dbt's staging rows without its helper columns: what the snapshot MERGE would insert or close. --#}
    {%- set helpers = ['dbt_change_type', 'dbt_unique_key'] -%}
    {%- if unique_key | is_list -%}
      {%- set helpers = ['dbt_change_type'] -%}
      {%- for key in unique_key -%}
        {%- do helpers.append('dbt_unique_key_' ~ loop.index) -%}
      {%- endfor -%}
    {%- endif -%}
    {%- set code -%}
select * except ({{ helpers | join(', ') }}) from (
{{ snapshot_staging_table(strategy, source_sql, existing_relation) }}
) dbt_snapshot_staging
    {%- endset -%}
    {%- set mode = 'incremental' -%}
  {%- endif -%}

  {%- set response = adapter.hudi_write(target_relation, code, settings, mode, model_name, 'sql', none, false,
                                        true) -%}
  {%- do store_result('main', response=response) -%}

  {%- set should_revoke = should_revoke(existing_relation, full_refresh_mode=False) -%}
  {%- do apply_grants(target_relation, grant_config, should_revoke=should_revoke) -%}
  {%- do persist_docs(target_relation, model) -%}

  {{ run_hooks(post_hooks, inside_transaction=True) }}
  {{ run_hooks(post_hooks, inside_transaction=False) }}

  {{ return({'relations': [target_relation]}) }}
{% endmacro %}


{#-- A snapshot source's rows without the Hudi meta columns a `select *` of a Hudi table carries: they change whenever
     Hudi rewrites a file (check_cols='all' would see every such row as changed), and the snapshot, a Hudi table,
     has its own. One `limit 0` query finds them. --#}
{% macro hudi_snapshot_source_sql(code) %}
  {%- set meta = ['_hoodie_commit_time', '_hoodie_commit_seqno', '_hoodie_record_key', '_hoodie_partition_path',
                  '_hoodie_file_name'] -%}
  {%- set found = [] -%}
  {%- for column in get_columns_in_query(code) -%}
    {%- if column | lower in meta -%}
      {%- do found.append(column) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- if found -%}
    {%- set wrapped -%}
select * except ({{ found | join(', ') }}) from (
{{ code }}
) hudi_snapshot_source
    {%- endset -%}
    {{- return(wrapped) -}}
  {%- else -%}
    {{- return(code) -}}
  {%- endif -%}
{% endmacro %}
