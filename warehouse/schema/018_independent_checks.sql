-- 018: our ratios beside independently published ones (model/independent_check.py;
-- docs/schema.md, `independent_checks`). One row per pinned published pair a run; the
-- blocking check `independent_ratios_within_tolerance` fails the run on an enforced pair
-- that is outside its tolerance.

CREATE TABLE independent_checks (
    run_date DATE NOT NULL,
    gpu_a VARCHAR NOT NULL,
    gpu_b VARCHAR NOT NULL,
    workload VARCHAR NOT NULL,        -- training_16bit | inference_16bit | inference_8bit | llm_decode | llm_prefill
    benchmark VARCHAR NOT NULL,
    source VARCHAR NOT NULL,          -- mlperf-training-v5.1, lambda-pytorch-v1, llama.cpp, ...
    their_ratio DOUBLE NOT NULL,      -- gpu_a / gpu_b as published
    ours DOUBLE,                      -- ours_a / ours_b; NULL when a GPU has no figure this run
    ours_a DOUBLE,
    ours_b DOUBLE,
    log_error DOUBLE,                 -- ln(ours / their_ratio)
    tolerance DOUBLE NOT NULL,        -- relative: passes within a factor 1 + tolerance either way
    passed BOOLEAN NOT NULL,
    enforced BOOLEAN NOT NULL,        -- false: reported, does not fail the run
    independence VARCHAR NOT NULL,    -- in_fit | one_side | independent
    ours_basis VARCHAR,               -- what our two figures rest on (method: evidence)
    citation VARCHAR NOT NULL,
    as_of DATE NOT NULL,
    note VARCHAR
);
