"""One cloud-provider registry: partitions, CLI and fetch dispatch are built from it.

The bundled reader is handed the registry's names (it does not import the registry, which
brings the fetchers): every registry provider has a bundled offers file.
"""

import pytest

from pipeline.defs.partitions import CLOUD_PROVIDERS, providers
from sources.__main__ import CLOUD_PARSERS as CLI_PARSERS
from sources.bundled import DATA_DIR
from sources.cloud.providers import PROVIDERS, fetch_provider
from sources.http import PoliteClient


def test_everything_lists_the_registry_providers():
    assert set(CLOUD_PROVIDERS) == set(PROVIDERS)
    assert set(providers.get_partition_keys()) == set(PROVIDERS)
    for name, entry in PROVIDERS.items():
        assert CLI_PARSERS[name] is entry.parse
        assert (DATA_DIR / "cloud" / f"{name}.csv").is_file(), name


def test_each_entry_has_a_fetcher_and_endpoint_or_says_why_not():
    for entry in PROVIDERS.values():
        assert (entry.fetch is not None) == (entry.endpoint is not None) == (entry.no_api is None)
        assert all(name.isupper() for name in entry.credentials)


@pytest.mark.parametrize("name", [n for n, e in PROVIDERS.items() if e.fetch is None])
def test_a_provider_without_an_api_is_skipped_without_a_request(name):
    client = PoliteClient(respect_robots=False)
    try:
        report = fetch_provider(name, client, {})
    finally:
        client.close()
    assert report.status.startswith("skipped: ") and report.results == ()


def test_unknown_provider_is_refused():
    with pytest.raises(ValueError, match="unknown cloud provider"):
        fetch_provider("moon-cloud", PoliteClient(), {})
