-- 022: resale value and break-even within the ownership period (issue 23 step 6;
-- model/resale.py; docs/schema.md `perf_per_dollar`, `cloud_vs_buy`; methodology §12).

-- What one GPU sells for at the end of the ownership period (`years`), net of eBay's
-- selling fee, with its 95 % interval; subtracted (times system_gpus) from total_cost_usd.
-- NULL where no resale could be estimated (none counted).
ALTER TABLE perf_per_dollar ADD COLUMN resale_usd DOUBLE;
ALTER TABLE perf_per_dollar ADD COLUMN resale_low_usd DOUBLE;
ALTER TABLE perf_per_dollar ADD COLUMN resale_high_usd DOUBLE;

-- Owning net of resale: the GPU's resale at the end of the period, why there is no
-- break-even (NULL when there is one), the utilisation at which renting for the whole
-- period costs what owning does (NULL above 100 % or for whole-term billing) and both
-- sides' cost over the period at this row's utilisation.
ALTER TABLE cloud_vs_buy ADD COLUMN resale_usd DOUBLE;
ALTER TABLE cloud_vs_buy ADD COLUMN break_even_note VARCHAR;
ALTER TABLE cloud_vs_buy ADD COLUMN break_even_utilization DOUBLE;
ALTER TABLE cloud_vs_buy ADD COLUMN own_period_cost_usd DOUBLE;
ALTER TABLE cloud_vs_buy ADD COLUMN rent_period_cost_usd DOUBLE;
-- What the resale after d days is computed from (resale.break_even_day): the GPU's value on
-- the used market today (before fees) and its log depreciation per year; 0 where none.
ALTER TABLE cloud_vs_buy ADD COLUMN used_value_usd DOUBLE;
ALTER TABLE cloud_vs_buy ADD COLUMN resale_depreciation DOUBLE;
