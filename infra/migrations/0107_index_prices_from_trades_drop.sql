-- The all-trades VWAP per second (0016-0018) is replaced by the index runner's ticks (0103, 0106):
-- stop feeding it, so the aggregator's inserts no longer pay for it.
DROP VIEW IF EXISTS index_prices_from_trades
