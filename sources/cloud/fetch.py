"""Live fetchers for cloud GPU prices, one per provider, through the shared `PoliteClient`.

`sources.cloud.providers.fetch_provider(provider, client, env)` runs the provider's fetcher
from this module: it makes every request the provider needs, lets the client archive each
response, and returns a `FetchReport`: a status ("ok", "skipped: <why>" or "failed:
<why>"), every `FetchResult`, and `contents()`, the bodies the provider's parser reads (one
body per page or response). Which providers exist, their endpoints and credentials are
in the registry, `sources.cloud.providers`.

- aws: Price List Query API `GetProducts` (POST, `X-Amz-Target`), SigV4-signed by
  requests-aws4auth (through the polite client, so politeness and archiving apply) with
  `AWS_ACCESS_KEY_ID` + `AWS_SECRET_ACCESS_KEY` (+ `AWS_SESSION_TOKEN`), GPU instances in
  `AWS_REGIONS`;
- azure: Retail Prices API through `sources.cloud.azure.fetch_azure`, no credentials;
- gcp: Cloud Billing Catalog `services/6F81-5844-456A/skus`, `X-Goog-Api-Key: GCP_API_KEY`;
- lambda: `GET /api/v1/instance-types`, `Authorization: Bearer LAMBDA_API_KEY`;
- vast: `GET /api/v0/bundles/?q=<JSON query>`, no credentials (`VAST_API_KEY` as Bearer
  when set);
- runpod: GraphQL `gpuTypes` (POST), `Authorization: Bearer RUNPOD_API_KEY`;
- coreweave, hyperstack: no price API is implemented (CoreWeave publishes prices only on
  its web page; Hyperstack's Pricebook API needs an account key and its response format
  is not documented here): always "skipped", no request; their bundled offers stay.

Credentials are read from `env` only, sent in headers only (never in a URL, so never in the
archive index), never logged and never put into a status or exception. A provider whose
credentials are missing is "skipped" without any request.

AWS `GetProducts` pages (`{"PriceList": ["<json>", ...], "NextToken": ...}`) are converted
into the bulk offer-file shape (`{"products": {sku: product}, "terms": {"OnDemand": {sku:
...}, "Reserved": {sku: ...}}}`) that `parse_aws` reads; the archive keeps the raw pages.

Failures are statuses, never exceptions: a non-ok final result (HTTP error, captcha, block
page, skipped by robots.txt or an open circuit) or a body the provider's parser cannot read
ends the provider's fetch with "failed: <why>"; bodies fetched before the failure are still
in `contents()`. Reaching `max_pages` is logged and keeps status "ok".
"""

import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from requests_aws4auth import AWS4Auth

from sources.cloud.azure import fetch_azure
from sources.cloud.records import MalformedFile, load_json
from sources.credentials import env_secret
from sources.http import FetchResult, PoliteClient

log = logging.getLogger("gpuvalue.cloud.fetch")

# --- AWS Price List Query API -------------------------------------------------------------
AWS_REGIONS = ("us-east-1", "us-west-2", "eu-west-1")
AWS_TARGET = "AWSPriceListService.GetProducts"
AWS_SERVICE = "pricing"  # SigV4 service name of the Price List Query API
AWS_SIGNING_REGION = "us-east-1"  # the endpoint's region, not the prices' region
AWS_MAX_RESULTS = 100  # the API's maximum per page
AWS_FILTERS = (
    ("instanceFamily", "GPU instance"),
    ("operatingSystem", "Linux"),
    ("tenancy", "Shared"),
    ("preInstalledSw", "NA"),
    ("capacitystatus", "Used"),
)
ENV_AWS_ACCESS_KEY = "AWS_ACCESS_KEY_ID"
ENV_AWS_SECRET_KEY = "AWS_SECRET_ACCESS_KEY"
ENV_AWS_SESSION_TOKEN = "AWS_SESSION_TOKEN"

# --- the others ---------------------------------------------------------------------------
ENV_GCP_KEY = "GCP_API_KEY"
ENV_LAMBDA_KEY = "LAMBDA_API_KEY"
ENV_VAST_KEY = "VAST_API_KEY"
ENV_RUNPOD_KEY = "RUNPOD_API_KEY"
GCP_PAGE_SIZE = 5000
VAST_LIMIT = 1000
# Rentable, verified, not rented, whole-GPU offers, cheapest first (vast.ai search syntax:
# field -> {operator: value}, plus "order", "type" and "limit").
VAST_QUERY: dict[str, Any] = {
    "verified": {"eq": True},
    "external": {"eq": False},
    "rentable": {"eq": True},
    "rented": {"eq": False},
    "num_gpus": {"gte": 1},
    "order": [["dph_total", "asc"]],
    "type": "on-demand",
    "limit": VAST_LIMIT,
}
RUNPOD_QUERY = (
    "query GpuTypes { gpuTypes { id displayName memoryInGb secureCloud communityCloud "
    "securePrice communityPrice secureSpotPrice communitySpotPrice } }"
)


@dataclass(frozen=True)
class FetchReport:
    """What one provider's fetch did.

    Attributes:
        provider: A provider of `sources.cloud.providers.PROVIDERS`.
        status: "ok", "skipped: <why>" (e.g. no credentials; no request made) or
            "failed: <why>" (credentials never appear in it).
        results: Every fetch made, in order (archived by the client when it has an archive).
    """

    provider: str
    status: str
    results: tuple[FetchResult, ...]

    @property
    def ok(self) -> bool:
        """Whether the status is "ok"."""
        return self.status == "ok"

    def contents(self) -> list[bytes]:
        """The bodies of the ok results, in order, ready for the provider's parser.

        AWS pages are converted to the offer-file shape; a body that is not in the
        provider's format (the one that made the fetch fail) is left out.
        """
        bodies = []
        for result in self.results:
            if not result.ok:
                continue
            try:
                bodies.append(_parser_body(self.provider, result.content))
            except MalformedFile:
                continue
        return bodies


# --- shared machinery -------------------------------------------------------------------


# A provider's fetcher: (run, endpoint url, environment, max pages) -> status text.
Fetcher = Callable[["Run", str, Mapping[str, str], int], str]


class Run:
    """One provider's fetch: records every result and checks each body with its parser."""

    def __init__(
        self, provider: str, client: PoliteClient, parse: Callable[[bytes], list[Any]]
    ) -> None:
        self.provider = provider
        self.client = client
        self.parse = parse
        self.results: list[FetchResult] = []

    def get(self, url: str, **kwargs: Any) -> FetchResult:
        """GET through the client, recorded (also the duck-typed client of fetch_azure)."""
        kwargs.setdefault("source", self.provider)
        result = self.client.get(url, **kwargs)
        self.results.append(result)
        return result

    def post(self, url: str, **kwargs: Any) -> FetchResult:
        """POST through the client, recorded."""
        kwargs.setdefault("source", self.provider)
        result = self.client.post(url, **kwargs)
        self.results.append(result)
        return result

    def check(self, result: FetchResult, page: int) -> str | None:
        """Why `result` (page number `page`) is unusable, or None when it parses."""
        if not result.ok:
            return f"page {page}: {result.outcome} ({result.error or 'no detail'})"
        try:
            self.parse(_parser_body(self.provider, result.content))
        except MalformedFile as exc:
            return f"page {page}: unreadable body: {_short(str(exc))}"
        return None


def _short(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _json(content: bytes) -> Any:
    return load_json(content)


def _parser_body(provider: str, content: bytes) -> bytes:
    """The body the provider's parser reads for a fetched `content` (AWS: converted).

    A cheap check of the top-level shape, not a full parse: it keeps error pages and
    GraphQL error responses out of `FetchReport.contents()`.

    Raises:
        MalformedFile: `content` is not JSON or not the provider's top-level shape.
    """
    if provider == "aws":
        return aws_offer_file(content)
    data = _json(content)
    if not isinstance(data, dict):
        raise MalformedFile(f"expected a JSON object, got {type(data).__name__}")
    shape_ok = {
        "azure": lambda: isinstance(data.get("Items"), list),
        "gcp": lambda: isinstance(data.get("skus"), list),
        "lambda": lambda: isinstance(data.get("data"), dict),
        "vast": lambda: isinstance(data.get("offers"), list),
        "runpod": lambda: isinstance((data.get("data") or {}).get("gpuTypes"), list),
    }[provider]
    if not shape_ok():
        raise MalformedFile(f"not a {provider} response: keys {', '.join(sorted(data)[:8])}")
    return content


# --- AWS --------------------------------------------------------------------------------


def aws_offer_file(content: bytes) -> bytes:
    """Convert one `GetProducts` response page into the bulk offer-file shape.

    Args:
        content: `{"FormatVersion": "aws_v1", "PriceList": ["<json of {product, terms}>",
            ...], "NextToken": ...}`; items may also be objects rather than JSON strings.

    Returns:
        `{"products": {sku: product}, "terms": {"OnDemand": {sku: {code: term}},
        "Reserved": {sku: {code: term}}}}` as UTF-8 JSON, for `parse_aws`.

    Raises:
        MalformedFile: Not JSON, no PriceList list, or an item without product.sku.
    """
    data = _json(content)
    if not isinstance(data, dict) or not isinstance(data.get("PriceList"), list):
        raise MalformedFile("not a GetProducts response: missing 'PriceList' list")
    products: dict[str, Any] = {}
    terms: dict[str, dict[str, Any]] = {"OnDemand": {}, "Reserved": {}}
    for index, raw in enumerate(data["PriceList"]):
        where = f"PriceList[{index}]"
        item = _json(raw.encode("utf-8")) if isinstance(raw, str) else raw
        if not isinstance(item, dict) or not isinstance(item.get("product"), dict):
            raise MalformedFile(f"{where}: missing 'product' object")
        product = item["product"]
        sku = product.get("sku")
        if not isinstance(sku, str) or not sku:
            raise MalformedFile(f"{where}.product: missing 'sku'")
        products[sku] = product
        item_terms = item.get("terms") or {}
        if not isinstance(item_terms, dict):
            raise MalformedFile(f"{where}.terms: expected an object")
        for kind, bucket in terms.items():
            sku_terms = item_terms.get(kind)
            if sku_terms:
                if not isinstance(sku_terms, dict):
                    raise MalformedFile(f"{where}.terms.{kind}: expected an object")
                bucket[sku] = sku_terms
    offer = {"formatVersion": "v1.0", "offerCode": "AmazonEC2", "products": products}
    offer["terms"] = terms
    return json.dumps(offer, separators=(",", ":")).encode("utf-8")


def aws_request_body(region: str, next_token: str | None = None) -> bytes:
    """The `GetProducts` JSON body for GPU instances in `region`, exactly as signed."""
    filters = [
        {"Type": "TERM_MATCH", "Field": field, "Value": value}
        for field, value in (*AWS_FILTERS, ("regionCode", region))
    ]
    payload: dict[str, Any] = {
        "ServiceCode": "AmazonEC2",
        "Filters": filters,
        "FormatVersion": "aws_v1",
        "MaxResults": AWS_MAX_RESULTS,
    }
    if next_token:
        payload["NextToken"] = next_token
    return json.dumps(payload, separators=(",", ":")).encode("utf-8")


def fetch_aws(run: Run, url: str, env: Mapping[str, str], max_pages: int) -> str:
    """AWS Price List Query API `GetProducts`, SigV4-signed, GPU instances per region."""
    access_key = env_secret(env, ENV_AWS_ACCESS_KEY)
    secret_key = env_secret(env, ENV_AWS_SECRET_KEY)
    if access_key is None or secret_key is None:
        return "skipped: no AWS credentials"
    session_token = env_secret(env, ENV_AWS_SESSION_TOKEN)
    # Signs each prepared request (date, body hash, session token) as requests sends it.
    auth = AWS4Auth(
        access_key, secret_key, AWS_SIGNING_REGION, AWS_SERVICE, session_token=session_token
    )
    pages = 0
    for region in AWS_REGIONS:
        token: str | None = None
        seen: set[str] = set()
        for page in range(1, max_pages + 1):
            body = aws_request_body(region, token)
            headers = {"content-type": "application/x-amz-json-1.1", "x-amz-target": AWS_TARGET}
            result = run.post(url, data=body, headers=headers, auth=auth)
            pages += 1
            problem = run.check(result, pages)
            if problem is not None:
                return f"failed: {region} {problem}"
            token = result.json().get("NextToken") or None
            if token is None:
                break
            if token in seen:
                log.warning("aws %s: NextToken repeated; stopping", region)
                break
            seen.add(token)
            if page == max_pages:
                log.warning("aws %s: stopped after max_pages=%d pages", region, max_pages)
    return "ok"


# --- Azure ------------------------------------------------------------------------------


def fetch_azure_prices(run: Run, url: str, env: Mapping[str, str], max_pages: int) -> str:
    """Azure Retail Prices API (public), paged by NextPageLink or $skip."""
    del env  # public API
    pages, state = fetch_azure(run, max_pages=max_pages, base_url=url)  # type: ignore[arg-type]
    for index, result in enumerate(run.results, start=1):
        if result.ok:
            problem = run.check(result, index)
            if problem is not None:
                return f"failed: {problem}"
    if state.startswith("ok"):
        return "ok"
    if state.startswith("truncated"):
        log.warning("azure: %s", state)
        return "ok"
    if state.startswith("failed"):
        return state
    return f"failed: {state}"  # partial: a later page failed


# --- GCP --------------------------------------------------------------------------------


def fetch_gcp(run: Run, url: str, env: Mapping[str, str], max_pages: int) -> str:
    """GCP Cloud Billing Catalog SKUs of Compute Engine, paged by nextPageToken."""
    key = env_secret(env, ENV_GCP_KEY)
    if key is None:
        return f"skipped: no GCP API key ({ENV_GCP_KEY})"
    headers = {"X-Goog-Api-Key": key, "Accept": "application/json"}
    token: str | None = None
    seen: set[str] = set()
    for page in range(1, max_pages + 1):
        params = {"currencyCode": "USD", "pageSize": str(GCP_PAGE_SIZE)}
        if token:
            params["pageToken"] = token
        result = run.get(url, params=params, headers=headers)
        problem = run.check(result, page)
        if problem is not None:
            return f"failed: {problem}"
        data = result.json()
        token = data.get("nextPageToken") if isinstance(data, dict) else None
        if not token:
            return "ok"
        if token in seen:
            log.warning("gcp: nextPageToken repeated; stopping")
            return "ok"
        seen.add(token)
    log.warning("gcp: stopped after max_pages=%d pages", max_pages)
    return "ok"


# --- single-response providers ----------------------------------------------------------


def _single(run: Run, result: FetchResult) -> str:
    problem = run.check(result, 1)
    return "ok" if problem is None else f"failed: {problem}"


def fetch_lambda(run: Run, url: str, env: Mapping[str, str], max_pages: int) -> str:
    """Lambda `GET /api/v1/instance-types` with a bearer key."""
    del max_pages  # one response
    key = env_secret(env, ENV_LAMBDA_KEY)
    if key is None:
        return f"skipped: no Lambda API key ({ENV_LAMBDA_KEY})"
    headers = {"Authorization": f"Bearer {key}", "Accept": "application/json"}
    return _single(run, run.get(url, headers=headers))


def fetch_vast(run: Run, url: str, env: Mapping[str, str], max_pages: int) -> str:
    """vast.ai bundles search: rentable verified on-demand offers, cheapest first."""
    del max_pages  # one response, bounded by the query's limit
    headers = {"Accept": "application/json"}
    key = env_secret(env, ENV_VAST_KEY)
    if key is not None:
        headers["Authorization"] = f"Bearer {key}"
    query = json.dumps(VAST_QUERY, separators=(",", ":"))
    return _single(run, run.get(url, params={"q": query}, headers=headers))


def fetch_runpod(run: Run, url: str, env: Mapping[str, str], max_pages: int) -> str:
    """RunPod GraphQL `gpuTypes` with a bearer key."""
    del max_pages  # one response
    key = env_secret(env, ENV_RUNPOD_KEY)
    if key is None:
        return f"skipped: no RunPod API key ({ENV_RUNPOD_KEY})"
    headers = {"Authorization": f"Bearer {key}", "Accept": "application/json"}
    return _single(run, run.post(url, json={"query": RUNPOD_QUERY}, headers=headers))
