-- The latest order-book quality of each market of one asset, measured on a book no older than {from}.
SELECT
    venue,
    market,
    spread_bps AS spreadBps,
    depth_bid_2 AS depthBid,
    depth_ask_2 AS depthAsk,
    depth_bid_1 AS depthBid1,
    depth_ask_1 AS depthAsk1,
    cost_buy AS costBuy,
    cost_sell AS costSell,
    liquidity_score AS liquidityScore
FROM market_quality FINAL
WHERE asset = {asset:String} AND ts >= fromUnixTimestamp64Milli({from:Int64}, 'UTC')
