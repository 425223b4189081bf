-- The latest order-book quality of each market of one asset, measured on a book no older than {from}.
SELECT
    venue,
    market,
    spread_bps AS spreadBps,
    depth_bid_2 AS depthBid,
    depth_ask_2 AS depthAsk,
    depth_bid_1 AS depthBid1,
    depth_ask_1 AS depthAsk1,
    -- Spec 2.4 maps a size to a number: a size the book could not fill (stored as null) is left out.
    CAST(mapFilter((size, bps) -> bps IS NOT NULL, cost_buy), 'Map(String, Float64)') AS costBuy,
    CAST(mapFilter((size, bps) -> bps IS NOT NULL, cost_sell), 'Map(String, Float64)') AS costSell,
    liquidity_score AS liquidityScore
FROM market_quality FINAL
WHERE asset = {asset:String} AND ts >= fromUnixTimestamp64Milli({from:Int64}, 'UTC')
