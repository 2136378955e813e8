"""Amazon parser on hand-written fixtures: every layout, locale and block page we know of."""

import pytest

from sources.retail import amazon
from sources.retail.amazon import is_block_page, parse_amazon
from sources.retail.records import Listing, Outcome
from tests.paths import FIXTURES_ROOT

FIXTURES = FIXTURES_ROOT / "retail" / "amazon"


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def parse(name: str, url: str | None = None):
    return parse_amazon(fixture(name), url)


def summary(record: Listing) -> tuple:
    """The fields a search card decides, in a form that reads well in a failure diff."""
    return (
        record.listing_id,
        record.title,
        record.price,
        record.price_high,
        record.currency,
        record.sponsored,
        record.price_missing_reason,
    )


def assert_search_defaults(records, domain: str) -> None:
    for record in records:
        assert record.source == "amazon"
        assert record.url == f"https://www.{domain}/dp/{record.listing_id}"
        assert record.condition is None
        assert record.sold is None
        assert record.sold_date is None
        assert record.best_offer_accepted is False


# ---------------------------------------------------------------------------------------
# Search results


def test_search_2018_layout():
    result = parse("search_2018.html")
    assert (result.outcome, result.page_kind) == (Outcome.OK, "search")
    assert [summary(r) for r in result.records] == [
        (
            "B06Y66K3XD",
            "EVGA GeForce GTX 1080 Ti FTW3 GAMING, 11GB GDDR5X, iCX Technology",
            849.99,
            None,
            "USD",
            True,
            None,
        ),
        (
            "B01MQM3W9Z",
            "ZOTAC GeForce GTX 1070 Mini, ZT-P10700G-10M, 8GB GDDR5",
            389.0,
            529.99,
            "USD",
            False,
            None,
        ),
        # No screen-reader text: read from sx-price-whole + sx-price-fractional.
        ("B01IEKYD5U", "MSI GeForce GTX 1060 Gaming X 6G", 1299.95, None, "USD", False, None),
        (
            "B06XXVBQX8",
            "NVIDIA TITAN Xp Graphics Card (900-1G611-2530-000)",
            None,
            None,
            None,
            False,
            "currently unavailable",
        ),
    ]
    assert result.dropped == {"no_asin": 1}  # the layout placeholder <li>
    assert_search_defaults(result.records, "amazon.com")


def test_search_2021_layout():
    result = parse("search_2021.html", "https://www.amazon.com/s?k=rtx+3090&ref=nb_sb_noss")
    assert (result.outcome, result.page_kind) == (Outcome.OK, "search")
    assert [summary(r) for r in result.records] == [
        # The struck-through list price ($1,499.99) comes first in the card; not the price.
        (
            "B08HR6ZBYJ",
            "NVIDIA GeForce RTX 3090 Founders Edition Graphics Card",
            1399.0,
            None,
            "USD",
            False,
            None,
        ),
        (
            "B08W8DGK3X",
            "ZOTAC Gaming GeForce RTX 3060 Twin Edge OC 12GB GDDR6 192-bit 15 Gbps PCIE 4.0 "
            "Gaming Graphics Card",
            289.99,
            None,
            "USD",
            True,
            None,
        ),
        (
            "B08HR3Y5GQ",
            "MSI Gaming GeForce RTX 3080 10GB GDRR6X 320-Bit HDMI/DP Nvlink Tri-Frozr 2 Ampere "
            "Architecture OC Graphics Card (RTX 3080 Gaming X Trio 10G)",
            None,
            None,
            None,
            False,
            "no price shown",
        ),
        (
            "B08HBR7QBM",
            "EVGA GeForce RTX 3090 FTW3 Ultra Gaming, 24GB GDDR6X, iCX3 Technology, ARGB LED, "
            "Metal Backplate, 24G-P5-3987-KR",
            None,
            None,
            None,
            False,
            "currently unavailable",
        ),
        (
            "B0BJFP3GNR",
            "GIGABYTE GeForce RTX 3090 Gaming OC 24G Graphics Card, 3X WINDFORCE Fans, 24GB "
            "384-bit GDDR6X",
            None,
            None,
            None,
            False,
            "see price in cart",
        ),
        # $0.00 (Kindle Unlimited) is the card's price: no price, never 0 and never the
        # paperback's $39.99 further down.
        (
            "B0C1KX5R2Z",
            "CUDA by Example: Programming Your RTX 3090 GPU",
            None,
            None,
            None,
            False,
            "zero price",
        ),
        # The per-unit price is an .a-text-price too and is skipped.
        (
            "B07GXGVMS7",
            "Thermal Grizzly Kryonaut Thermal Paste for GPU and CPU, 1 g",
            8.99,
            None,
            "USD",
            False,
            None,
        ),
    ]
    # The s-search-result placeholder without an ASIN; header and pagination widgets are
    # not result cards and are not counted.
    assert result.dropped == {"no_asin": 1}
    assert_search_defaults(result.records, "amazon.com")


def test_search_2024_layout_title_is_never_the_brand_alone():
    result = parse("search_2024.html")  # marketplace from the page's ue_mid
    assert (result.outcome, result.page_kind) == (Outcome.OK, "search")
    assert [summary(r) for r in result.records] == [
        (
            "B0BGT61797",
            "ASUS ROG Strix GeForce RTX® 4090 OC Edition Gaming Graphics Card (PCIe 4.0, 24GB "
            "GDDR6X, HDMI 2.1a, DisplayPort 1.4a)",
            3429.99,
            None,
            "USD",
            False,
            None,
        ),
        # Sponsored: its aria-label starts "Sponsored Ad –", which is not part of the title;
        # the certification side sheet's h2 is not the title either.
        (
            "B0BHD9TS9Q",
            "ASUS TUF Gaming NVIDIA GeForce RTX 4090 OC Edition Gaming Graphics Card (24GB "
            "GDDR6X, PCIe 4.0, HDMI 2.1a, DisplayPort 1.4a)",
            3999.99,
            None,
            "USD",
            True,
            None,
        ),
        (
            "B0BJFRT43X",
            "VIPERA NVIDIA GeForce RTX 4090 Founders Edition Graphic Card",
            3299.99,
            None,
            "USD",
            False,
            None,
        ),
        # "$2,679.99 (4 used & new offers)" is not a price element: no price.
        (
            "B0BHBTJ2X2",
            "PNY GeForce RTX 4090 24GB VERTO Triple Fan Graphics Card DLSS 3",
            None,
            None,
            None,
            False,
            "no featured offers",
        ),
        # The title already starts with the brand: not repeated.
        (
            "B0CLM7ZS2L",
            "PNY NVIDIA RTX 6000 Ada Generation 48GB GDDR6 Graphics Card",
            6799.0,
            None,
            "USD",
            False,
            None,
        ),
    ]
    brands = [r.extra.get("brand") for r in result.records]
    assert brands == ["ASUS", "ASUS", None, "PNY", "PNY"]
    assert all(r.title != r.extra.get("brand") for r in result.records)
    assert result.dropped == {}
    assert_search_defaults(result.records, "amazon.com")


@pytest.mark.parametrize("url", [None, "https://www.amazon.de/s?k=rtx+4080&__mk_de_DE=ÅMÅŽÕÑ"])
def test_search_german_locale(url):
    result = parse("search_de.html", url)
    assert result.outcome == Outcome.OK
    assert [summary(r) for r in result.records] == [
        (
            "B0BMTHS8GQ",
            "Gigabyte GeForce RTX 4080 16GB Gaming OC Grafikkarte, 16 GB GDDR6X",
            1299.0,
            None,
            "EUR",
            False,
            None,
        ),
        # Empty screen-reader text and no symbol: whole "1.349," + fraction "90", in the
        # marketplace's currency.
        (
            "B0BNLV7RHR",
            "MSI GeForce RTX 4080 16GB Gaming X Trio Grafikkarte - 16GB GDDR6X, 2595 MHz, "
            "PCI Express Gen 4",
            1349.9,
            None,
            "EUR",
            True,
            None,
        ),
        (
            "B0BPJQSSHS",
            "ZOTAC GAMING GeForce RTX 4080 16GB AMP Extreme AIRO Grafikkarte",
            1199.99,
            1249.99,
            "EUR",
            False,
            None,
        ),
    ]
    assert_search_defaults(result.records, "amazon.de")


def test_search_indian_grouping():
    result = parse("search_in.html", "https://www.amazon.in/s?k=rtx+4090")
    assert result.outcome == Outcome.OK
    assert [(r.listing_id, r.price, r.price_high, r.currency) for r in result.records] == [
        ("B0BGT61797", 157990.0, None, "INR"),
        ("B0BLGLP4RK", 189999.0, None, "INR"),
    ]
    assert_search_defaults(result.records, "amazon.in")


def test_no_results_page_is_empty():
    result = parse("search_no_results.html")
    assert (result.outcome, result.page_kind, result.records) == (Outcome.EMPTY, "search", ())


# ---------------------------------------------------------------------------------------
# Product pages


def product(name: str, url: str | None = None) -> Listing:
    result = parse(name, url)
    assert (result.outcome, result.page_kind) == (Outcome.OK, "item")
    assert len(result.records) == 1
    return result.records[0]


def test_product_2018_priceblock():
    record = product("product_2018.html")
    assert record.listing_id == "B06Y66K3XD"
    assert record.title == (
        "EVGA GeForce GTX 1080 Ti FTW3 GAMING, 11GB GDDR5X, iCX Technology - 9 Thermal Sensors "
        "& RGB LED G/P/M, Asynchronous Fan, Optimized Airflow Design Graphics Card "
        "11G-P4-6696-KR"
    )
    # The struck-through list price ($899.99) is not the price.
    assert (record.price, record.price_high, record.currency) == (749.99, None, "USD")
    assert record.condition is None
    assert record.url == "https://www.amazon.com/dp/B06Y66K3XD"
    assert (record.sponsored, record.sold, record.best_offer_accepted) == (False, None, False)


def test_product_2023_core_price_new_offer():
    record = product("product_2023.html")
    assert record.listing_id == "B0BHD9TS9Q"
    assert record.title.startswith("ASUS TUF Gaming GeForce RTX® 4090 OC Edition")
    # Not the list price ($1,799.99) nor the used offer ($1,349.00).
    assert (record.price, record.currency, record.condition) == (1599.99, "USD", "new")
    assert record.price_missing_reason is None


def test_product_price_only_in_whole_and_fraction_spans():
    record = product("product_whole_fraction.html")
    assert record.listing_id == "B0CSZBBQ9B"
    # Both .a-offscreen spans are empty; the carousel's $1,199.99 belongs to another item.
    assert (record.price, record.currency) == (1649.99, "USD")


def test_product_out_of_stock_has_no_price_and_says_why():
    record = product("product_out_of_stock.html")
    assert record.listing_id == "B0BG6BRX8Y"
    assert record.title.startswith("ZOTAC Gaming GeForce RTX 4090 AMP Extreme AIRO")
    # The carousel's ₹1,57,990.00 is another item's price.
    assert (record.price, record.currency) == (None, None)
    assert record.price_missing_reason == "currently unavailable"
    assert record.url == "https://www.amazon.in/dp/B0BG6BRX8Y"


def test_product_used_offer_only_is_marked_used():
    page = b"""<html><body><div id="dp">
      <span id="productTitle">NVIDIA GeForce RTX 3090 Founders Edition</span>
      <div id="usedAccordionRow"><div id="corePrice_feature_div">
        <span class="a-price"><span class="a-offscreen">$899.00</span></span>
      </div></div>
      <input type="hidden" id="ASIN" value="B08HR6ZBYJ">
    </div></body></html>"""
    record = parse_amazon(page, "https://www.amazon.com/dp/B08HR6ZBYJ").records[0]
    assert (record.price, record.currency, record.condition) == (899.0, "USD", "used")


def test_product_prefers_new_offer_listed_after_used_one():
    page = b"""<html><body><div id="dp">
      <span id="productTitle">NVIDIA GeForce RTX 3090 Founders Edition</span>
      <div id="usedAccordionRow"><div id="corePrice_feature_div">
        <span class="a-price"><span class="a-offscreen">$899.00</span></span></div></div>
      <div id="newAccordionRow_0"><div id="corePrice_feature_div">
        <span class="a-price"><span class="a-offscreen">$1,499.00</span></span></div></div>
    </div></body></html>"""
    record = parse_amazon(page, "https://www.amazon.com/dp/B08HR6ZBYJ").records[0]
    # No ASIN input on the page: the URL's /dp/ path gives it.
    assert record.listing_id == "B08HR6ZBYJ"
    assert (record.price, record.condition) == (1499.0, "new")


# ---------------------------------------------------------------------------------------
# Bot checks, garbage and bad input


@pytest.mark.parametrize("name", ["captcha_classic.html", "captcha_continue.html"])
def test_captcha_variants(name):
    result = parse(name)
    assert (result.outcome, result.page_kind, result.records) == (
        Outcome.CAPTCHA,
        "captcha",
        (),
    )
    assert is_block_page(fixture(name)) == "captcha"


@pytest.mark.parametrize(
    "name",
    ["search_2021.html", "search_2024.html", "product_2023.html", "search_no_results.html"],
)
def test_real_pages_are_not_block_pages(name):
    assert is_block_page(fixture(name)) is None


def test_unrecognised_page_is_a_parse_error():
    result = parse("garbage.html", "https://www.amazon.com/s?k=rtx+4090")
    assert (result.outcome, result.records) == (Outcome.PARSE_ERROR, ())
    assert result.detail


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"   \n",
        b"\x00\x01\x02\xff\xfe\xfd" * 100,
        b'{"error": "not html"}',
        b"<html><body><div data-component-type='s-search-result'></div></body></html>",
        "<html><body><p>caf\xe9</p></body></html>".encode("latin-1"),
    ],
)
def test_bad_input_is_classified_never_raised(content):
    result = parse_amazon(content, None)
    assert result.outcome == Outcome.PARSE_ERROR
    assert result.records == ()


def test_an_exception_inside_becomes_a_parse_error(monkeypatch):
    def broken(*_args):
        raise RuntimeError("boom")

    monkeypatch.setattr(amazon, "decode_page", broken)
    result = parse_amazon(fixture("search_2021.html"))
    assert result.outcome == Outcome.PARSE_ERROR
    assert "RuntimeError: boom" in result.detail


# ---------------------------------------------------------------------------------------
# Marketplace and currency


def card_page(price_html: str, head: str = "") -> bytes:
    """A one-card 2021+ results page around a price element."""
    return f"""<html><head>{head}</head><body><div class="s-main-slot">
      <div data-asin="B0BGT61797" data-component-type="s-search-result" class="s-result-item">
        <h2><a href="/dp/B0BGT61797"><span>ASUS ROG Strix GeForce RTX 4090 OC</span></a></h2>
        {price_html}
      </div></div></body></html>""".encode()


WHOLE_FRACTION = (
    '<span class="a-price"><span class="a-offscreen"></span><span aria-hidden="true">'
    '<span class="a-price-whole">1,999<span class="a-price-decimal">.</span></span>'
    '<span class="a-price-fraction">99</span></span></span>'
)


@pytest.mark.parametrize(
    ("url", "currency"),
    [
        ("https://www.amazon.com/s?k=rtx", "USD"),
        ("https://www.amazon.co.uk/s?k=rtx", "GBP"),
        ("https://www.amazon.it/s?k=rtx", "EUR"),
        ("https://www.amazon.es/s?k=rtx", "EUR"),
        ("https://www.amazon.fr/s?k=rtx", "EUR"),
        ("https://www.amazon.com.br/s?k=rtx", "BRL"),
        ("https://www.amazon.sa/s?k=rtx", "SAR"),
        ("https://www.amazon.co.jp/s?k=rtx", "JPY"),
        ("https://www.amazon.ca/s?k=rtx", "CAD"),
        ("https://www.amazon.com.au/s?k=rtx", "AUD"),
        ("https://www.amazon.in/s?k=rtx", "INR"),
    ],
)
def test_url_domain_sets_currency_of_symbol_less_prices(url, currency):
    record = parse_amazon(card_page(WHOLE_FRACTION), url).records[0]
    assert (record.price, record.currency) == (1999.99, currency)
    assert record.url.startswith(f"https://www.{url.split('/')[2].removeprefix('www.')}/dp/")


@pytest.mark.parametrize(
    ("text", "currency"), [("$1,999.99", "CAD"), ("US$1,999.99", "USD"), ("CDN$ 1,999.99", "CAD")]
)
def test_bare_dollar_on_amazon_ca_is_canadian(text, currency):
    price = f'<span class="a-price"><span class="a-offscreen">{text}</span></span>'
    record = parse_amazon(card_page(price), "https://www.amazon.ca/s?k=rtx").records[0]
    assert (record.price, record.currency) == (1999.99, currency)


@pytest.mark.parametrize(
    ("head", "domain"),
    [
        ("<script>var ue_mid = 'A1F83G8C2ARO7P';</script>", "amazon.co.uk"),
        ('<link rel="canonical" href="https://www.amazon.co.jp/s?k=rtx">', "amazon.co.jp"),
        ("", None),
    ],
)
def test_marketplace_inferred_from_page_without_url(head, domain):
    record = parse_amazon(card_page(WHOLE_FRACTION, head)).records[0]
    expected_url = f"https://www.{domain}/dp/B0BGT61797" if domain else None
    assert record.url == expected_url
    assert record.currency == amazon.DOMAIN_CURRENCY.get(domain)


# ---------------------------------------------------------------------------------------
# Prices that must never be guessed (issue 14)

WHOLE_ONLY_DE = (
    '<span class="a-price"><span class="a-offscreen"></span><span aria-hidden="true">'
    '<span class="a-price-symbol">€</span><span class="a-price-whole">26.29</span></span></span>'
)


def test_whole_span_holding_the_whole_price_keeps_its_decimals():
    # amazon.de 2022: the whole price sits in .a-price-whole and no fraction span follows;
    # with the screen-reader text empty, "26.29" was read as 2629.
    record = parse_amazon(card_page(WHOLE_ONLY_DE), "https://www.amazon.de/s?k=x").records[0]
    assert (record.price, record.currency) == (26.29, "EUR")


@pytest.mark.parametrize(
    ("whole", "fraction"), [("26.29", "99"), ("1,2,3", "00"), ("9" * 40, "99"), ("0.", "00")]
)
def test_whole_and_fraction_that_disagree_are_no_price(whole, fraction):
    price = (
        '<span class="a-price"><span class="a-offscreen"></span><span aria-hidden="true">'
        f'<span class="a-price-whole">{whole}</span>'
        f'<span class="a-price-fraction">{fraction}</span></span></span>'
    )
    record = parse_amazon(card_page(price), "https://www.amazon.com/s?k=x").records[0]
    assert record.price is None
    assert record.price_missing_reason.startswith(("unreadable price", "zero price"))


@pytest.mark.parametrize("text", ["-$129.99", "$1,2,3", "$1e5", "$" + "9" * 400, "$٣٩٩"])
def test_malformed_screen_reader_price_is_no_price_with_a_reason(text):
    price = f'<span class="a-price"><span class="a-offscreen">{text}</span></span>'
    record = parse_amazon(card_page(price), "https://www.amazon.com/s?k=x").records[0]
    assert record.price is None
    assert record.price_missing_reason.startswith("unreadable price")


@pytest.mark.parametrize("cut", ["$36", "$369.", "$369.9"])
def test_page_cut_inside_a_price_is_a_parse_error(cut):
    full = card_page('<span class="a-price"><span class="a-offscreen">$369.99</span></span>')
    truncated = full[: full.index(b"$369.99")] + cut.encode()
    result = parse_amazon(truncated, "https://www.amazon.com/s?k=x")
    assert result.outcome == Outcome.PARSE_ERROR
    assert "truncated" in result.detail


def test_oversized_page_is_a_parse_error():
    result = parse_amazon(card_page("") + b" " * (11 * 1024 * 1024))
    assert result.outcome == Outcome.PARSE_ERROR
    assert "larger than" in result.detail


def test_no_results_check_is_linear_on_deep_nesting():
    import time

    deep = b"<html><body>" + b"<div>x" * 20000 + b"</div>" * 20000 + b"</body></html>"
    started = time.perf_counter()
    result = parse_amazon(deep)
    assert time.perf_counter() - started < 5
    assert result.outcome == Outcome.PARSE_ERROR


def test_declared_charset_is_used_and_a_bad_byte_changes_no_currency():
    latin1 = (
        card_page(
            '<span class="a-price"><span class="a-offscreen">1.299,00 \xa3</span></span>',
            head='<meta charset="iso-8859-1">',
        )
        .decode()
        .encode("latin-1")
    )
    assert parse_amazon(latin1, "https://www.amazon.de/s?k=x").records[0].currency == "GBP"
    utf8 = card_page('<span class="a-price"><span class="a-offscreen">￥1,299</span></span>')
    damaged = utf8.replace(b"ASUS", b"AS\xffS")
    record = parse_amazon(damaged, "https://www.amazon.co.jp/s?k=x").records[0]
    assert (record.price, record.currency) == (1299.0, "JPY")


def test_a_page_cut_after_an_inner_html_end_tag_is_still_truncated():
    inner = "<script>var frame = '<html><body></body></html>';</script>" + " " * 20000
    page = card_page(inner + '<span class="a-price"><span class="a-offscreen">$369.99</span>')
    cut = page[: page.index(b"$369.99") + 3]
    result = parse_amazon(cut, "https://www.amazon.com/s?k=x")
    assert result.outcome == Outcome.PARSE_ERROR
    assert "truncated" in result.detail
