-- Per-market seconds of the trades stored before market_seconds_from_trades existed. Sums are not
-- idempotent, so only the (market, second) keys market_seconds does not hold yet are filled: a
-- second run adds nothing, and neither does a trade that the view (0101) already counted. The one
-- loss is a second that holds trades from both sides of 0101 (an aggregator inserting while 0101
-- and this file ran): its earlier trades are not added. Roles other than all and demo refuse to
-- start on a schema that is behind, and those migrate before they consume, so none is inserting.
INSERT INTO market_seconds
SELECT
    asset,
    venue,
    market,
    quote,
    toDateTime(toStartOfSecond(ts), 'UTC') AS second,
    sum(price * quantity) AS notional,
    sum(quantity) AS volume,
    count() AS trade_count,
    argMaxState(price, (ts, trade_id)) AS last_price,
    max(ts) AS last_trade_at
FROM trades
WHERE (asset, venue, market, quote, toDateTime(toStartOfSecond(ts), 'UTC')) NOT IN (SELECT asset, venue, market, quote, second FROM market_seconds)
GROUP BY asset, venue, market, quote, second
