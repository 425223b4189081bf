-- Start (unix s) of the latest index bucket of {asset} (markets quoted in {usd_quotes}, as
-- indexCandles.sql) before {before_s}; 0 when there is none. Reads bucket keys only, no candle state.
SELECT toUnixTimestamp(max(bucket)) AS start
FROM {table:Identifier}
WHERE asset = {asset:String} AND quote IN {usd_quotes:Array(String)} AND bucket < toDateTime({before_s:UInt32}, 'UTC')
