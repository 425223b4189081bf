-- The newest second of the index in the last hour (unix s), when there is one.
SELECT toUnixTimestamp(max(second)) AS latest, count() AS n
FROM index_ticks
WHERE second > now() - INTERVAL 1 HOUR
HAVING n > 0
