-- The index runner's latest verdict on each candidate market of one asset (aggregate/indexRunner.ts):
-- excluded from the index price or not, and why. Only the verdicts of its latest computed second:
-- a market missing from it had no trade in the index's volume window at that time.
SELECT venue, market, excluded, reason
FROM index_constituents_latest FINAL
WHERE asset = {asset:String}
  AND ts = (SELECT max(ts) FROM index_constituents_latest WHERE asset = {asset:String})
