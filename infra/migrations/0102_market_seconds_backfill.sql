-- Per-market seconds of the trades stored before market_seconds_from_trades existed. Sums are not
-- idempotent: apply this while no aggregator is inserting (roles migrate before they consume), or
-- a trade inserted between 0101 and this file would count twice.
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
GROUP BY asset, venue, market, quote, second
