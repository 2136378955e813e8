-- 008: what each relative-performance value rests on, the platform and price scope of
-- each costed system, and how a cloud price is billed (docs/schema.md).

-- measured | bridged | spec_estimate | dettmers_rule (docs/methodology.md §3).
ALTER TABLE relative_performance ADD COLUMN evidence VARCHAR;
-- workstation (PCIe cards; 1/2/4/8 GPUs) | server (SXM/OAM/superchip modules; 4/8 GPUs).
ALTER TABLE perf_per_dollar ADD COLUMN platform VARCHAR;
-- gpu (a GPU's own price) | server_share (a whole-server price per GPU, host included).
ALTER TABLE perf_per_dollar ADD COLUMN price_scope VARCHAR;
-- per_hour_used (on-demand, spot) | whole_term (reservations: billed 24 x 365).
ALTER TABLE cloud_vs_buy ADD COLUMN billing VARCHAR;
ALTER TABLE cloud_vs_buy ADD COLUMN platform VARCHAR;

-- MLPerf figures publish no batch size (inference) or none that divides (training), and
-- are never batch-corrected.
ALTER TABLE benchmark_debiased ALTER COLUMN batch_size_per_gpu DROP NOT NULL;
ALTER TABLE benchmark_debiased ALTER COLUMN batch_size_ref DROP NOT NULL;
