"""The published benchmark tables carry provenance (issue 22 step 1), in its vocabularies."""

import pytest

from sources.benchmarks.provenance import BATCH_REGIMES, HOSTS, STACKS
from warehouse.export import open_published

# Rows per value in the bundled build (NULL: the source does not say). A new benchmark file
# changes these; a change of the rules shows here first.
EXPECTED = {
    "benchmark_results": {
        "stack": {
            "pytorch-cuda": 2363, None: 495, "tensorrt": 297, "mxnet": 127, "tensorflow": 113,
            "tensorrt-llm": 106, "vllm": 15, "mango-llmboost": 8, "pytorch-rocm": 6,
            "tinygrad": 4, "paddle": 1,
        },
        "host": {"server": 2091, None: 1444},
        "batch_regime": {"fixed-batch": 3130, "offline": 379, "batch-1": 26},
    },
    "llm_benchmarks": {
        # MLPerf's 64 serving rows moved to llm_serving_benchmarks (issue 24): only the
        # batch-1 llama.cpp-class rows remain.
        "stack": {
            "llama.cpp-cuda": 882, "llama.cpp-vulkan": 20, "ollama": 15,
            "llama.cpp-rocm": 8, "llama.cpp-sycl": 3, "vllm": 1, "mlx": 1,
        },
        # llamacpp_threads.csv (issue 22 step 6) states a desktop host or none (NULL);
        # its four Intel Arc rows: three desktop, one (llama.cpp's SYCL docs) unstated;
        # issue 24's DGX Spark (vLLM) and Mac Studio (MLX) rows: desktop machines.
        "host": {"server": 874, "desktop": 35, None: 16, "sbc": 5},
        "batch_regime": {"batch-1": 930},
    },
}  # fmt: skip
VOCABULARY = {"stack": STACKS, "host": HOSTS, "batch_regime": BATCH_REGIMES}


@pytest.mark.parametrize("table", sorted(EXPECTED))
def test_published_benchmark_rows_carry_provenance(built, table):
    con = open_published(built.published)
    try:
        counts = {
            column: dict(con.sql(f"SELECT {column}, count(*) FROM {table} GROUP BY 1").fetchall())
            for column in VOCABULARY
        }
    finally:
        con.close()
    assert counts == EXPECTED[table]
    for column, vocabulary in VOCABULARY.items():
        assert set(counts[column]) - {None} <= set(vocabulary)
