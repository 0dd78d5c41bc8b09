{#-- Clustering from dbt (docs/dbt.md, "Clustering"), on a model's table (`model: orders`), a relation or a path:
       dbt run-operation hudi_cluster --args '{model: orders}'                  (plan and execute, Hudi's default)
       dbt run-operation hudi_cluster --args '{model: orders, op: schedule}'    (plan only)
       dbt run-operation hudi_cluster --args '{model: orders, op: execute}'     (the oldest pending plan, or instant:)

     The model's `clustering` setting (cluster_by, layout, sizes) and hudi_options apply, then `options: {hoodie.*:
     ...}`. It prints the instant, the files written and the rows, and refuses while a write is in flight. --#}

{% macro hudi_cluster() %}
  {{ return(hudi_table_service('cluster', kwargs)) }}
{% endmacro %}
