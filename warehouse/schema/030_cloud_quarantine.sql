-- 030: cloud offer integrity before publish (issue 26 item 1; docs/schema.md, methodology
-- "Cloud offer integrity"). An offer that fails a rule of sources/cloud/integrity.py is
-- loaded here instead of into cloud_offers: kept out of the model, shown in the input
-- report with its reason. Replaced per provider x day with that provider's load.
CREATE TABLE cloud_quarantine (
    observed_at TIMESTAMP NOT NULL,
    provider VARCHAR NOT NULL,
    instance_type VARCHAR,
    region VARCHAR,
    price_type VARCHAR NOT NULL,
    gpu_id VARCHAR NOT NULL,
    gpu_count INTEGER NOT NULL,
    usd_per_hour DOUBLE NOT NULL,
    usd_per_gpu_hour DOUBLE NOT NULL,
    citation VARCHAR,
    pricing VARCHAR,
    reliability DOUBLE,
    -- gpu_band | discount_above_list | instance_history | provider_history | cross_provider:
    -- the first rule the offer failed.
    rule VARCHAR NOT NULL,
    -- Every rule it failed, each with its band and the evidence behind it.
    reason VARCHAR NOT NULL,
    -- The first failed rule's band, USD per GPU-hour (high may be +inf: no ceiling).
    low_usd_per_gpu_hour DOUBLE,
    high_usd_per_gpu_hour DOUBLE,
    -- true when the provider's whole night was refused (too many offers out of bounds):
    -- then none of its offers of that night were loaded.
    night_refused BOOLEAN NOT NULL DEFAULT false
);
