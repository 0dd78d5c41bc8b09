-- Day 2 updates customer 2 with only a new email and customer 4 with only a new tier: the other columns must keep
-- their stored values (PartialUpdateAvroPayload), in the merged snapshot that Spark SQL reads.
select customer_id, name, email, tier
from {{ ref('customers') }}
where (customer_id = 2 and (name <> 'Bob' or country <> 'DE'
                            or email <> {% if var('day') | int >= 2 %}'bob@new.example'{% else %}'bob@example.com'{% endif %}))
   or (customer_id = 4 and (name <> 'Dan' or email <> 'dan@example.com'
                            or tier <> {% if var('day') | int >= 2 %}'gold'{% else %}'silver'{% endif %}))
