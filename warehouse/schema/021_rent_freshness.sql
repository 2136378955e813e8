-- 021: rent verdicts on live offers (issue 23 step 5; docs/schema.md, methodology
-- "Rent verdicts on live offers"). How each cloud price is set, a marketplace host's
-- reliability, and per run whether an offer is within its freshness window. Offers older
-- than the window stay in the tables, flagged, but are never ranked or picked.

-- list | spot | marketplace (sources/cloud/providers.py pricing_kind). NULL on rows loaded
-- before 021; the model treats those as marketplace (the shortest window).
ALTER TABLE cloud_offers ADD COLUMN pricing VARCHAR;
-- The host's reliability score 0..1 where the marketplace states one (vast.ai live API).
ALTER TABLE cloud_offers ADD COLUMN reliability DOUBLE;

ALTER TABLE cloud_perf_per_dollar ADD COLUMN pricing VARCHAR;
ALTER TABLE cloud_perf_per_dollar ADD COLUMN offer_age_days INTEGER;
ALTER TABLE cloud_perf_per_dollar ADD COLUMN fresh BOOLEAN;
-- Offer rows of this GPU x provider x price type at the chosen price, and their regions.
ALTER TABLE cloud_perf_per_dollar ADD COLUMN listings INTEGER;
ALTER TABLE cloud_perf_per_dollar ADD COLUMN locations VARCHAR;
ALTER TABLE cloud_perf_per_dollar ADD COLUMN reliability DOUBLE;
-- Stale offers are not ranked: rank is NULL for them.
ALTER TABLE cloud_perf_per_dollar ALTER COLUMN rank DROP NOT NULL;

ALTER TABLE cloud_vs_buy ADD COLUMN pricing VARCHAR;
ALTER TABLE cloud_vs_buy ADD COLUMN offer_age_days INTEGER;
ALTER TABLE cloud_vs_buy ADD COLUMN fresh BOOLEAN;

ALTER TABLE verdicts ADD COLUMN pricing VARCHAR;
ALTER TABLE verdicts ADD COLUMN listings INTEGER;
ALTER TABLE verdicts ADD COLUMN locations VARCHAR;
ALTER TABLE verdicts ADD COLUMN reliability DOUBLE;
-- What the rent pick's price rests on when that is thin (a single marketplace listing).
ALTER TABLE verdicts ADD COLUMN offer_caveat VARCHAR;
