-- 002: retail prices come from parsed Amazon/eBay pages. Every parsed record is kept in
-- price_observations with why it does or does not feed a daily price (drop_reason NULL =
-- used), and every fetched page's outcome (ok, empty, captcha, blocked, ...) is recorded.

ALTER TABLE price_observations ADD COLUMN condition VARCHAR;
ALTER TABLE price_observations ADD COLUMN price_high DOUBLE;
ALTER TABLE price_observations ADD COLUMN sponsored BOOLEAN;
ALTER TABLE price_observations ADD COLUMN sold BOOLEAN;
ALTER TABLE price_observations ADD COLUMN sold_date DATE;
ALTER TABLE price_observations ADD COLUMN best_offer_accepted BOOLEAN;
ALTER TABLE price_observations ADD COLUMN price_missing_reason VARCHAR;
ALTER TABLE price_observations ADD COLUMN match_reason VARCHAR;
ALTER TABLE price_observations ADD COLUMN drop_reason VARCHAR;
ALTER TABLE price_observations ADD COLUMN archive_sha256 VARCHAR;
-- Parser notes as JSON (e.g. eBay "fewer words" matches, sponsored unknown, ended date).
ALTER TABLE price_observations ADD COLUMN extra VARCHAR;

CREATE TABLE retail_pages (
    day DATE NOT NULL,
    fetched_at TIMESTAMP NOT NULL,
    source VARCHAR NOT NULL,
    url VARCHAR NOT NULL,
    status INTEGER,
    outcome VARCHAR NOT NULL,
    page_kind VARCHAR NOT NULL,
    records INTEGER NOT NULL,
    dropped VARCHAR,
    detail VARCHAR,
    archive_sha256 VARCHAR
);

-- Observations left out of the daily price, by reason, per day x source (outliers included).
CREATE TABLE price_drops (
    day DATE NOT NULL,
    source VARCHAR NOT NULL,
    reason VARCHAR NOT NULL,
    n INTEGER NOT NULL
);
