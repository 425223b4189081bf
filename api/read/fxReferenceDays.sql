-- The reference rates of {currency} that apply to the days {from_day} to {to_day}: every one dated
-- in them, and the latest dated before them (a day without a publication keeps the previous one).
SELECT toString(date) AS day, per_usd AS perUsd, source
FROM fx_reference_rates FINAL
WHERE currency = {currency:String}
  AND date <= toDate({to_day:String})
  AND date >= (SELECT max(date) FROM fx_reference_rates WHERE currency = {currency:String} AND date <= toDate({from_day:String}))
ORDER BY date
