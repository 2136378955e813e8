-- 005: quality flags on benchmark_results (docs/schema.md, "benchmark_results").
-- Suspect figures are kept and flagged, never dropped: `flags` is a comma-separated, sorted
-- list of flag names (missing, super_linear, outlier, batch_changed, no_batch_size); NULL or
-- '' means clean, and the model only uses clean rows. `flag_detail` says why, in words.
-- A published 0 means "not measured": it is stored as a NULL throughput flagged `missing`
-- (never as 0), and some formats (MLPerf inference) publish no batch size, hence the two
-- relaxed NOT NULLs. `source_file` names the input file a row was read from and `system` the
-- source's own name for the machine (e.g. 'Dell 8x H100 80GB SXM5', 'DGX A100 (8x A100 80GB)').
ALTER TABLE benchmark_results ADD COLUMN flags VARCHAR;
ALTER TABLE benchmark_results ADD COLUMN flag_detail VARCHAR;
ALTER TABLE benchmark_results ADD COLUMN source_file VARCHAR;
ALTER TABLE benchmark_results ADD COLUMN system VARCHAR;
ALTER TABLE benchmark_results ALTER COLUMN throughput DROP NOT NULL;
ALTER TABLE benchmark_results ALTER COLUMN batch_size_per_gpu DROP NOT NULL;
