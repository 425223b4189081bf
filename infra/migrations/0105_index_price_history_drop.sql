-- index_price_history now reads the index runner's ticks (0106), no longer the all-trades VWAP of
-- index_prices: a view cannot be replaced in one statement that is safe to repeat, so drop first.
DROP VIEW IF EXISTS index_price_history
