-- Index price of the given assets between {from_s} and {to_s} (unix seconds, inclusive), oldest
-- first: one row per second in which it traded or changed, the swap valuation looks up the latest
-- one at or before each swap. Prices carried by the fail-closed rule are left out: a swap is valued
-- with a measured price at most an hour old.
SELECT
    asset,
    toUnixTimestamp(second) AS second,
    price
FROM index_price_history
WHERE asset IN {assets:Array(String)}
  AND second >= toDateTime({from_s:UInt32}, 'UTC')
  AND second <= toDateTime({to_s:UInt32}, 'UTC')
  AND status != 'fail_closed'
ORDER BY asset, second
