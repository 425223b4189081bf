-- No reader is left on the all-trades VWAP table (index_price_history reads index_ticks since 0106).
DROP TABLE IF EXISTS index_prices
