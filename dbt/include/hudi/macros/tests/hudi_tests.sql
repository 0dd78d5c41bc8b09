{#-- Generic tests on a Hudi model's table and timeline; use them in schema.yml:
       data_tests:
         - hudi_no_pending_instants
         - hudi_unique_record_key
         - hudi_commit_count: {min_count: 1, max_count: 5, action: commit}
         - hudi_latest_commit: {operation: upsert, min_updates: 1, max_deletes: 0} --#}

{% test hudi_no_pending_instants(model) %}
  {{ hudi_no_pending_instants_sql(model) }}
{% endtest %}

{% test hudi_unique_record_key(model) %}
  {{ hudi_unique_record_key_sql(model) }}
{% endtest %}

{% test hudi_commit_count(model, min_count=none, max_count=none, action=none) %}
  {{ hudi_commit_count_sql(model, min_count, max_count, action) }}
{% endtest %}

{% test hudi_latest_commit(model, operation=none, min_inserts=none, max_inserts=none, min_updates=none,
                           max_updates=none, min_deletes=none, max_deletes=none) %}
  {{ hudi_latest_commit_sql(model, operation, min_inserts, max_inserts, min_updates, max_updates, min_deletes,
                            max_deletes) }}
{% endtest %}
