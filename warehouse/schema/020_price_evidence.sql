-- 020: prices that hold up (issue 23, steps 2 and 3). Every current price carries the
-- interval of its evidence (model/price_uncertainty.py): log_sd is now set for observed
-- prices too, listing_log_sd is the spread between listings a buyer faces, and the
-- country and currency of its sources (sources/price_origins.py) are stored beside it.
-- price_consistency keeps the GPU x market prices that market consistency dropped
-- (model/market_consistency.py), with the rule and the reason.

ALTER TABLE current_prices ADD COLUMN listing_log_sd DOUBLE;   -- SD of log price between one day's listings (own, shrunk to the pool)
ALTER TABLE current_prices ADD COLUMN source_country VARCHAR;  -- ISO 3166 codes of the sources, comma-joined (GB, US)
ALTER TABLE current_prices ADD COLUMN source_currency VARCHAR; -- ISO 4217 codes the sources price in (GBP, USD); converted to USD

CREATE TABLE price_consistency (
    run_date DATE NOT NULL,
    gpu_id VARCHAR NOT NULL,
    market VARCHAR NOT NULL,          -- new | used
    price_usd DOUBLE,                 -- the dropped price (observed or nowcast)
    price_day DATE,
    age_days INTEGER,
    price_method VARCHAR,             -- observed | nowcast
    sources VARCHAR,
    rule VARCHAR NOT NULL,            -- discontinued | used_above_new
    reason VARCHAR NOT NULL           -- why, in words (shown on the site)
);
