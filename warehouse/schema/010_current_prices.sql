-- 010: today's price per GPU x market with its method and age (model/nowcast.py),
-- the method in perf_per_dollar, and price history as one queryable view.

CREATE TABLE current_prices (
    run_date DATE NOT NULL,
    gpu_id VARCHAR NOT NULL,
    market VARCHAR NOT NULL,          -- new | used | mean (mean: both observed in the window)
    price_usd DOUBLE NOT NULL,        -- today's price: observed, or nowcast to the run date
    price_low DOUBLE,                 -- observed: the day's lowest kept observation; nowcast: 95 % interval
    price_high DOUBLE,
    log_sd DOUBLE,                    -- nowcast: SD of the log price today (NULL when observed)
    price_day DATE NOT NULL,          -- the last observation's day (never the run date for a nowcast)
    age_days INTEGER NOT NULL,        -- run_date - price_day
    price_method VARCHAR NOT NULL,    -- observed | nowcast
    observed_price_usd DOUBLE NOT NULL,  -- the robust daily price on price_day
    n_observations INTEGER,
    sources VARCHAR,
    detail VARCHAR NOT NULL
);

ALTER TABLE perf_per_dollar ADD COLUMN price_method VARCHAR;

-- "Price of GPU X over time by market": every robust daily price with the GPU's name.
CREATE VIEW gpu_price_history AS
SELECT d.gpu_id, g.name, d.market, d.day, d.price_usd, d.n_observations, d.price_min_usd,
       d.price_max_usd, d.sources
FROM gpu_prices_daily d LEFT JOIN gpus g USING (gpu_id);

-- What an input asset last loaded from files (price_history, gpus): a night skips a load
-- whose files are unchanged, so its cost does not grow with the history or repeat per run.
CREATE TABLE input_loads (
    asset VARCHAR NOT NULL,           -- price_history | gpus
    loaded_at TIMESTAMP NOT NULL,
    fingerprint VARCHAR NOT NULL,     -- sha256 over the input files (and package versions)
    rows INTEGER NOT NULL,
    detail VARCHAR NOT NULL           -- e.g. "9 files, 2018-08-17..2026-07-08"
);
