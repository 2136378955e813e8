-- 006: fitted debiasing constants, intervals on relative performance, and the model's
-- validation figures (docs/schema.md, "Model fit and validation"; docs/methodology.md).
-- Every figure here is computed by the pipeline (model/fit.py, validation.py).

-- Audit trail of each debiased figure: the constants it applied and where they came from.
ALTER TABLE benchmark_debiased ADD COLUMN interconnect VARCHAR;       -- nvlink | pcie (form-factor proxy)
ALTER TABLE benchmark_debiased ADD COLUMN batch_gain DOUBLE;          -- g applied (training rows)
ALTER TABLE benchmark_debiased ADD COLUMN batch_gain_source VARCHAR;  -- 'dettmers:cnn', 'fitted:cnn'
ALTER TABLE benchmark_debiased ADD COLUMN efficiency_source VARCHAR;  -- 'dettmers:8', 'fitted:8|nvlink'
ALTER TABLE benchmark_debiased ADD COLUMN parameter_set VARCHAR;      -- ModelParameters.constants
ALTER TABLE benchmark_debiased ADD COLUMN era_term VARCHAR;           -- the table fixed effect

-- 95 % interval on relative performance (NULL where none can be computed).
ALTER TABLE relative_performance ADD COLUMN value_low DOUBLE;
ALTER TABLE relative_performance ADD COLUMN value_high DOUBLE;
ALTER TABLE relative_performance ADD COLUMN interval_method VARCHAR;

CREATE TABLE model_constants (
    run_date DATE NOT NULL,
    parameter_set VARCHAR NOT NULL,   -- dettmers | fitted
    name VARCHAR NOT NULL,            -- batch_gain_per_doubling | multi_gpu_efficiency
    key VARCHAR NOT NULL,             -- workload class, 'inference:<class>', 'n' or 'n|interconnect'
    value DOUBLE NOT NULL,
    ci_low DOUBLE,                    -- 95 % interval; NULL for Dettmers' and undetermined fits
    ci_high DOUBLE,
    n INTEGER,                        -- rows (batch gain) or 1-vs-n pairs (efficiency) used
    n_groups INTEGER,                 -- clusters the interval is computed over
    n_gpus INTEGER,
    data_used VARCHAR NOT NULL,
    determined BOOLEAN NOT NULL,      -- interval exists and is at most fit_max_ci_width wide
    used BOOLEAN NOT NULL,            -- applied to at least one benchmark_debiased row
    detail VARCHAR NOT NULL
);

CREATE TABLE model_validation (
    run_date DATE NOT NULL,
    check_name VARCHAR NOT NULL,      -- batch_gain | multi_gpu_prediction | spec_estimator_logo | a100_vs_v100
    subject VARCHAR NOT NULL,
    metric VARCHAR NOT NULL,
    value DOUBLE,
    reference_value DOUBLE,           -- what it is compared with (Dettmers' figure, the naive rule)
    value_low DOUBLE,                 -- 95 % interval where one exists
    value_high DOUBLE,
    n INTEGER,
    detail VARCHAR NOT NULL
);
