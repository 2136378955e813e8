"""Provenance (stack, host, batch regime) of benchmark rows, from the sources' own words."""

import polars as pl
import pytest

from sources.benchmarks.provenance import (
    BATCH_REGIMES,
    HOSTS,
    STACKS,
    host_from_form_factor,
    llm_batch_regime,
    llm_host,
)
from sources.bundled import DATA_DIR, read_benchmark_figures, read_llm_benchmarks
from sources.tables import BadInputError

BENCH = DATA_DIR / "benchmarks"
LLM = BENCH / "llm" / "llm_inference.csv"


@pytest.fixture(scope="module")
def figures() -> pl.DataFrame:
    files = sorted(BENCH.glob("*.csv"))
    return pl.concat([read_benchmark_figures(f, None) for f in files], how="diagonal_relaxed")


@pytest.fixture(scope="module")
def llm() -> pl.DataFrame:
    return read_llm_benchmarks(LLM, None)


def one(frame: pl.DataFrame, citation_part: str, **equal) -> dict:
    """The single row whose citation contains `citation_part` and whose columns equal `equal`."""
    found = frame.filter(pl.col("citation").str.contains(citation_part, literal=True))
    for column, value in equal.items():
        found = found.filter(pl.col(column) == value)
    assert found.height >= 1, (citation_part, equal)
    rows = found.select("stack", "host", "batch_regime").unique()
    assert rows.height == 1, rows
    return rows.row(0, named=True)


def test_mlperf_trt_systems_are_tensorrt_and_its_llm_benchmarks_tensorrt_llm(figures):
    sdxl = one(figures, "NVIDIA/results/DGX-H100_H100-SXM-80GBx8_TRT/stable-diffusion-xl/")
    assert sdxl == {"stack": "tensorrt", "host": "server", "batch_regime": "offline"}
    llama = one(figures, "NVIDIA/results/DGX-H100_H100-SXM-80GBx8_TRT/llama2-70b-99/")
    assert llama["stack"] == "tensorrt-llm"


def test_tinybox_submissions_are_tinygrad_on_a_server(figures):
    red = one(figures, "tinycorp/results/tinybox_red/resnet")
    assert red == {"stack": "tinygrad", "host": "server", "batch_regime": "fixed-batch"}
    assert one(figures, "tinybox_green/bert")["stack"] == "tinygrad"


def test_mlperf_training_framework_from_the_system_name(figures):
    assert one(figures, "dgxa100_ngc20.06_pytorch/bert")["stack"] == "pytorch-cuda"
    assert one(figures, "dgxa100_ngc20.06_mxnet/resnet")["stack"] == "mxnet"
    # PyTorch on an AMD Instinct GPU is PyTorch on ROCm.
    amd = one(figures, "AMD/results/MI300X_EPYC_9575F_pytorch_llama2_70b/")
    assert amd["stack"] == "pytorch-rocm"
    # A system name that names no framework leaves the stack unknown, never guessed.
    assert one(figures, "Dell/results/XE9680x8H100-SXM-80GB/resnet")["stack"] is None


def test_mlperf_inference_stack_cells_name_the_software_field(figures):
    # The AMD MI300X Llama 2 70B rows carry the submission's Software (vLLM / LLMBoost).
    assert one(figures, "closed/AMD/results/8xMI300X_2xEPYC_9575F/llama2")["stack"] == "vllm"
    mango = one(figures, "closed/MangoBoost/results/8xMI300X_2xEPYC_9534/llama2")
    assert mango["stack"] == "mango-llmboost"
    assert one(figures, "closed/AMD/results/8xMI300X_2xEPYC_9575F/mixtral")["stack"] is None


def test_a_geforce_mlperf_box_without_a_system_name_has_no_known_host(figures):
    assert one(figures, "GATEOverflow/results/rtx4090x2", model="resnet50")["host"] is None


def test_lambda_rows_are_pytorch_cuda_with_the_host_left_to_the_form_factor(figures):
    row = one(figures, "lambdal/deeplearning-benchmark", gpu_id="b200", num_gpus=8)
    assert row == {"stack": "pytorch-cuda", "host": None, "batch_regime": "fixed-batch"}
    gpus = pl.DataFrame({"gpu_id": ["b200", "rtx-4090"], "form_factor": ["sxm", "pcie"]})
    lam = figures.filter(pl.col("source") == "lambda", pl.col("gpu_id").is_in(["b200", "rtx-4090"]))
    hosts = host_from_form_factor(lam, gpus).group_by("gpu_id").agg(pl.col("host").unique())
    assert dict(hosts.iter_rows()) == {"b200": ["server"], "rtx-4090": [None]}


def test_dle_framework_is_the_readme_folder(figures):
    torch = one(figures, "PyTorch/Classification/ConvNets/resnet50v1.5/README.md", gpu_id="t4",
                batch_size_per_gpu=64)  # fmt: skip
    assert torch == {"stack": "pytorch-cuda", "host": "server", "batch_regime": "fixed-batch"}
    tf = one(figures, "TensorFlow/LanguageModeling/BERT/README.md", task="training")
    assert tf["stack"] == "tensorflow"
    assert one(figures, "MxNet/", batch_size_per_gpu=64)["stack"] == "mxnet"
    # Paddle-TRT tables are TensorRT inference.
    assert one(figures, "PaddlePaddle/", batch_size_per_gpu=64)["stack"] == "tensorrt"
    batch_one = one(figures, "TensorFlow/LanguageModeling/BERT", task="inference", gpu_id="t4",
                    batch_size_per_gpu=1)  # fmt: skip
    assert batch_one["batch_regime"] == "batch-1"


def test_llama_cpp_rows_take_the_backend_and_the_host_from_the_citation(llm):
    pi = one(llm, "issue #1 ", gpu_id="rx-6700-xt")
    assert pi == {"stack": "llama.cpp-vulkan", "host": "sbc", "batch_regime": "batch-1"}
    desktop = one(llm, "issue #43 ", model="llama-3.2-3b")
    assert desktop == {"stack": "llama.cpp-vulkan", "host": "desktop", "batch_regime": "batch-1"}
    assert one(llm, "PR #18 ", model="llama-3.2-3b")["stack"] == "ollama"
    cuda = one(llm, "XiongjieDai/", gpu_id="rtx-4090", context_tokens=512, num_gpus=1,
               quant="Q4_K_M", phase="decode", model="llama-3-8b")  # fmt: skip
    assert cuda == {"stack": "llama.cpp-cuda", "host": "server", "batch_regime": "batch-1"}
    # MLPerf's serving rows moved to serving.csv (llm_serving_benchmarks, issue 24): the
    # batch-1 file holds none; the rule still reads an MLPerf serving row as Offline.
    assert llm.filter(pl.col("phase") == "serving").is_empty()
    row = {"source": "mlperf", "phase": "serving", "batch": None, "citation": "x"}
    assert (llm_batch_regime(row), llm_host(row)) == ("offline", "server")


def test_every_bundled_value_is_in_its_vocabulary(figures, llm):
    for frame in (figures, llm):
        assert set(frame["stack"].drop_nulls()) <= set(STACKS)
        assert set(frame["host"].drop_nulls()) <= set(HOSTS)
        assert set(frame["batch_regime"].drop_nulls()) <= set(BATCH_REGIMES)
    # Constrained hosts appear only where the source says so (the Pi-hosted eGPU rows).
    assert llm.filter(pl.col("host") == "sbc").height == 5


def _with_cell(source, tmp_path, column: str, value: str, row: int = 3):
    """A copy of `source` with a `column` cell added (blank) and set to `value` on `row`."""
    lines = source.read_text(encoding="utf-8").splitlines()
    header = lines[0].split(",")
    if column not in header:
        lines = [f"{lines[0]},{column}", *(f"{line}," for line in lines[1:])]
    cells = lines[row - 1].split(",")
    cells[-1] = value
    lines[row - 1] = ",".join(cells)
    path = tmp_path / source.name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_stated_value_wins_over_the_rule(tmp_path):
    path = _with_cell(LLM, tmp_path, "host", "egpu")
    rows = read_llm_benchmarks(path, None)
    assert rows["host"][1] == "egpu" and rows["host"][0] == "server"


@pytest.mark.parametrize(
    ("source", "column", "read"),
    [
        (BENCH / "nvidia_dle.csv", "stack", read_benchmark_figures),
        (BENCH / "mlperf_inference.csv", "stack", read_benchmark_figures),
        (LLM, "host", read_llm_benchmarks),
    ],
)
def test_a_value_outside_the_vocabulary_is_refused_naming_file_and_line(
    tmp_path, source, column, read
):
    path = _with_cell(source, tmp_path, column, "pytorch" if column == "stack" else "cloud")
    with pytest.raises(BadInputError, match="is not one of") as error:
        read(path, None)
    assert (error.value.path, error.value.line, error.value.column) == (str(path), 3, column)
