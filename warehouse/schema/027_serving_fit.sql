-- Issue 24, serving fit on the full evidence: the serving model's bandwidth efficiency is
-- anchored on batch-1 decode evidence (per GPU), its per-layer step overhead and compute
-- efficiency fitted per engine, and its intervals are the leave-one-GPU-out residuals'
-- empirical quantiles (docs/methodology.md §13).
ALTER TABLE llm_serving_validation ADD COLUMN layer_overhead_us DOUBLE;  -- fitted, per layer and step
ALTER TABLE llm_serving_validation ADD COLUMN log_q05 DOUBLE;  -- 5 % quantile of log(measured / predicted), held out
ALTER TABLE llm_serving_validation ADD COLUMN log_q95 DOUBLE;  -- 95 % quantile of the same
ALTER TABLE llm_serving_validation ADD COLUMN coverage DOUBLE;  -- share of held-out rows inside the band of the other GPUs' residuals
ALTER TABLE llm_serving_validation ADD COLUMN fp4_gain DOUBLE;  -- fitted native 4-bit rate over the FP8 rate (datasheets: 2)
