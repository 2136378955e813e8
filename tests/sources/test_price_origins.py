"""Every retail source has an origin (country, currency, label, unit), in one table."""

from sources.bundled import RETAIL_SOURCES
from sources.price_origins import ORIGINS, all_listings, countries, currencies


def test_every_retail_source_has_an_origin():
    assert set(RETAIL_SOURCES) <= set(ORIGINS), sorted(set(RETAIL_SOURCES) - set(ORIGINS))


def test_ebay_uk_is_gbp_from_great_britain_and_mixes_are_listed():
    assert (countries("ebay-sold-uk"), currencies("ebay-sold-uk")) == ("GB", "GBP")
    assert countries("amazon,ebay-sold-uk") == "GB,US"
    assert currencies("newegg-siliconvalueindex") == "USD"
    assert countries(None) is None and countries("no-such-source") is None


def test_only_separate_listings_count_as_several_observations():
    assert all_listings("ebay-sold-uk") and all_listings("amazon")
    assert not all_listings("keepa-amazon")
    assert not all_listings("ebay-sold-dataset,keepa-amazon")
    assert not all_listings("") and not all_listings("no-such-source")


def test_a_daily_minimum_is_one_figure_and_each_new_source_keeps_its_country():
    # The Greek tracker's lowest ask of the day is one figure, not separate listings.
    assert (countries("gpu-prices-gr-daily-min"), currencies("gpu-prices-gr-daily-min")) == (
        "GR",
        "EUR",
    )
    assert all_listings("gpu-prices-gr") and not all_listings("gpu-prices-gr-daily-min")
    assert ORIGINS["gpu-prices-gr-daily-min"].vat_rate == ORIGINS["gpu-prices-gr"].vat_rate
    # A German quote is EUR from DE, not folded into the US quote source.
    assert (countries("quoted-street-price-de"), currencies("quoted-street-price-de")) == (
        "DE",
        "EUR",
    )
    assert countries("quoted-street-price") == "US"
