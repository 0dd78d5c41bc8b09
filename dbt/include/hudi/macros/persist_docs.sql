{#-- persist_docs on a Hudi model's table: the model's description as the table comment and the column
     descriptions as column comments of its catalog entry (DESCRIBE TABLE EXTENDED, the docs site). The comment of
     _hoodie_commit_time carries the table path and is never replaced. Other relations: dbt-spark's. --#}
{% macro hudi__persist_docs(relation, model, for_relation, for_columns) %}
  {%- if relation.is_hudi -%}
    {%- set table_comment = model.description if (for_relation and config.persist_relation_docs()
                                                   and model.description) else none -%}
    {%- set column_comments = {} -%}
    {%- if for_columns and config.persist_column_docs() -%}
      {%- for name, column in model.columns.items() -%}
        {%- if column.get('description') -%}
          {%- do column_comments.update({column.get('name') or name: column['description']}) -%}
        {%- endif -%}
      {%- endfor -%}
    {%- endif -%}
    {%- if table_comment is not none or column_comments -%}
      {%- do adapter.hudi_persist_docs(relation, table_comment, column_comments) -%}
    {%- endif -%}
  {%- else -%}
    {{ spark__persist_docs(relation, model, for_relation, for_columns) }}
  {%- endif -%}
{% endmacro %}
