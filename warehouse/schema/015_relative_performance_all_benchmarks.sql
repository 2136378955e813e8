-- 015: the relative performance with every benchmark table weighted alike, beside the
-- headline `value`, which weights tables by benchmark class (transformer and LLM 1,
-- diffusion 0.5, CNN and RNN 0.1; model/benchmark_weights.py, docs/methodology.md §3).
-- Filled for every row; the interval is the same kind as value_low/value_high.
ALTER TABLE relative_performance ADD COLUMN value_all_benchmarks DOUBLE;
ALTER TABLE relative_performance ADD COLUMN value_all_benchmarks_low DOUBLE;
ALTER TABLE relative_performance ADD COLUMN value_all_benchmarks_high DOUBLE;
