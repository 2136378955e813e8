"""The one GPU-name knowledge base (`sources.gpu_names`) and the three contexts it serves."""

import ast
from pathlib import Path

import pytest

from sources.benchmarks.names import gpu_id_for
from sources.bundled import bundled_catalog
from sources.catalog import match_title
from sources.cloud.gpu_names import aggregator_gpu, canonical_gpu
from sources.gpu_names import (
    AGGREGATOR_DEFAULTS,
    CLOUD_DEFAULTS,
    RETAIL_DEFAULTS,
    gpu_for_name,
    laptop_part,
    normalize,
    read_models,
)

ROOT = Path(__file__).parents[2]
CATALOG = bundled_catalog()


@pytest.mark.parametrize(
    ("name", "retail", "cloud", "aggregator"),
    [
        # a bare family name: the context decides
        ("NVIDIA A100", None, "a100-sxm4-40gb", None),
        ("A100 80GB", None, "a100-sxm4-80gb", None),
        ("H100", None, "h100-sxm5-80gb", None),
        ("V100 32GB", None, "v100-sxm2-32gb", None),
        ("RTX 6000", None, "quadro-rtx-6000", None),
        ("H200", "h200-sxm", "h200-sxm", None),
        # a name that pins the card means it everywhere
        ("A100 PCIe 80GB", "a100-pcie-80gb", "a100-pcie-80gb", "a100-pcie-80gb"),
        ("H100 NVL", "h100-nvl-94gb", "h100-nvl-94gb", "h100-nvl-94gb"),
        ("RTX 4070 SUPER Ti", "rtx-4070-ti-super", "rtx-4070-ti-super", "rtx-4070-ti-super"),
        ("RTX 4090 D", "rtx-4090-d", "rtx-4090-d", "rtx-4090-d"),
        ("RTX 3060 8GB", "rtx-3060-8gb", "rtx-3060-8gb", "rtx-3060-8gb"),
        # contradictions and laptop parts are no card in any context
        ("RTX 3090 12GB", None, None, None),
        ("H100 SXM5 96GB", None, None, None),
        ("RTX 4090 Laptop GPU", None, None, None),
    ],
)
def test_one_name_read_in_each_context(name, retail, cloud, aggregator):
    assert read_models(normalize(name), CATALOG, RETAIL_DEFAULTS).gpu == retail
    assert gpu_for_name(name, CATALOG, CLOUD_DEFAULTS) == cloud
    assert gpu_for_name(name, CATALOG, AGGREGATOR_DEFAULTS) == aggregator


def test_the_three_contexts_agree_because_they_share_the_module():
    # The same variant rule answers in the retail matcher, the cloud and benchmark mappings.
    assert match_title("NVIDIA A100-SXM4-80GB GPU", CATALOG).gpu == "a100-sxm4-80gb"
    assert canonical_gpu("NVIDIA A100-SXM4-80GB") == "a100-sxm4-80gb"
    assert gpu_id_for("NVIDIA A100-SXM4-80GB (400W)") == "a100-sxm4-80gb"
    assert aggregator_gpu("A100 SXM4 80GB") == "a100-sxm4-80gb"
    # A provider's memory field picks the variant (within 12 %: nvidia-smi's 79.6 GB).
    assert canonical_gpu("A100", memory_gb=79.6) == "a100-sxm4-80gb"
    assert canonical_gpu("RTX 4090", memory_gb=48) is None  # modded boards are no RTX 4090


def test_reasons_name_the_conflict_and_every_candidate():
    read = read_models(normalize("h100 sxm5 96gb"), CATALOG, CLOUD_DEFAULTS)
    assert read.reason == "form_conflict: h100 is not sold as sxm"
    read = read_models(normalize("rtx 3080 ti 16gb"), CATALOG, RETAIL_DEFAULTS)
    assert read.reason == "memory_conflict: GeForce RTX 3080 Ti has 12 GB, not 16 GB"
    read = read_models(normalize("rtx 3060"), CATALOG, RETAIL_DEFAULTS)
    assert (
        read.reason == "ambiguous: rtx 3060 could be GeForce RTX 3060 12 GB / GeForce RTX 3060 8 GB"
    )


def test_laptop_parts_but_not_the_max_q_workstation_card():
    assert laptop_part("RTX 2080 SUPER Max-Q") == "max-q"
    assert laptop_part("GeForce RTX 4090 Laptop GPU") == "laptop"
    assert laptop_part("RTX PRO 6000 Blackwell Max-Q Workstation Edition") is None


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_the_knowledge_base_is_neutral_and_benchmarks_do_not_import_cloud():
    neutral = _imports(ROOT / "sources" / "gpu_names.py")
    assert not {m for m in neutral if m.startswith(("dagster", "sources"))}  # reads no files
    assert not {m for m in _imports(ROOT / "sources" / "benchmarks" / "names.py") if "cloud" in m}
    for path in ("sources/catalog.py", "sources/cloud/gpu_names.py", "sources/benchmarks/names.py"):
        assert "sources.gpu_names" in _imports(ROOT / path), path
