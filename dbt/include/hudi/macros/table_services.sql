{#-- Hudi table services from dbt, on a model's table (`model: orders`), a relation (`relation: analytics.orders`)
     or a path (`path: /data/orders`):
       dbt run-operation hudi_compact  --args '{model: orders}'                 (MOR: log files into base files)
       dbt run-operation hudi_clean    --args '{model: orders, retained: 2}'    (policy: commits | file_versions)
       dbt run-operation hudi_rollback --args '{model: orders}'                 (instant: default the latest commit)
       dbt run-operation hudi_archive  --args '{model: orders, max_commits: 30}' (min_commits / max_commits kept)
       dbt run-operation hudi_sync     --args '{model: orders}'                 (Hive metastore / Glue entries)
       dbt run-operation hudi_savepoint   --args '{model: orders}'   (instant: default the latest commit; comment)
       dbt run-operation hudi_savepoints  --args '{model: orders}'   (lists the savepoints)
       dbt run-operation hudi_restore     --args '{model: orders}'   (to the latest savepoint, or instant: ...)
       dbt run-operation hudi_delete_savepoint --args '{model: orders, instant: 20240101000000000}'

     The model's own `compaction` / `cleaning` / `hudi_options` settings apply, then `options: {hoodie.*: ...}`.
     Each prints what it did (instant, files, rows) and refuses while a write is in flight. --#}

{% macro hudi_compact() %}
  {{ return(hudi_table_service('compact', kwargs)) }}
{% endmacro %}

{% macro hudi_clean() %}
  {{ return(hudi_table_service('clean', kwargs)) }}
{% endmacro %}

{% macro hudi_rollback() %}
  {{ return(hudi_table_service('rollback', kwargs)) }}
{% endmacro %}

{% macro hudi_archive() %}
  {{ return(hudi_table_service('archive', kwargs)) }}
{% endmacro %}

{#-- The model's hive_sync / glue_sync settings (or options: {hoodie.datasource.hive_sync.enable: true, ...}): the
     catalog entries of an existing table synced to its latest commit, as after a write (docs/catalog-sync.md). --#}
{% macro hudi_sync() %}
  {{ return(hudi_table_service('sync', kwargs)) }}
{% endmacro %}


{#-- Savepoints and restore (docs/dbt.md, "Undoing a bad dbt run"): savepoint before a risky run, restore after a
     bad one. --#}
{% macro hudi_savepoint() %}
  {{ return(hudi_table_service('savepoint', kwargs)) }}
{% endmacro %}

{% macro hudi_savepoints() %}
  {{ return(hudi_table_service('savepoints', kwargs)) }}
{% endmacro %}

{% macro hudi_delete_savepoint() %}
  {{ return(hudi_table_service('delete_savepoint', kwargs)) }}
{% endmacro %}

{% macro hudi_restore() %}
  {{ return(hudi_table_service('restore', kwargs)) }}
{% endmacro %}


{% macro hudi_table_service(service, args) %}
  {%- do adapter.hudi_check_service_args(service, args) -%}
  {%- set relation = args.get('relation') -%}
  {%- set node_config = none -%}
  {%- set target = args.get('path') or args.get('relation') -%}
  {%- if args.get('model') -%}
    {%- set node = hudi_find_node(args['model'], 'hudi_' ~ service) -%}
    {%- set relation = api.Relation.create(database=node.database, schema=node.schema, identifier=node.alias,
                                           type='table') -%}
    {%- set node_config = node.config -%}
    {%- set target = 'model ' ~ args['model'] -%}
  {%- endif -%}
  {%- set report = adapter.hudi_table_service(service, args, relation, node_config, target) -%}
  {{ log(report['message'], info=true) }}
  {{ return(report) }}
{% endmacro %}


{#-- The project's model or snapshot named `name` (a node of the graph). --#}
{% macro hudi_find_node(name, operation) %}
  {%- for node in graph.nodes.values() -%}
    {%- if node.resource_type in ['model', 'snapshot'] and node.name == name -%}
      {{- return(node) -}}
    {%- endif -%}
  {%- endfor -%}
  {{ exceptions.raise_compiler_error(operation ~ ": no model or snapshot named '" ~ name ~ "' in this project. "
     ~ "Name a model of the project, or give relation: schema.table or path: <table path>.") }}
{% endmacro %}
