"""Published deep-learning benchmark tables: one adapter per public format.

- `lambda_csv`: Lambda's deep-learning benchmark CSV pairs (throughput + global batch size).
- `nvidia_dle`: NVIDIA DeepLearningExamples README "Performance" Markdown tables.
- `mlperf`: MLPerf Training (time to train) and Inference (summary results) tables.

Every adapter is a pure function from file bytes to `ParsedTable` (records plus counts of
what was skipped and which GPU names are unknown); `flags` marks suspect figures across a
whole set of rows; `inbox` finds the files users drop into the snapshot and loads them.
"""
