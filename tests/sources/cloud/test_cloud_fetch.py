"""Live cloud fetchers against a local server that speaks each provider's documented API."""

import hashlib
import hmac
import json
import re
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest

from sources.archive import Archive
from sources.cloud.aws import parse_aws
from sources.cloud.fetch import AWS_REGIONS, AWS_TARGET, FetchReport, aws_offer_file
from sources.cloud.gcp import parse_gcp
from sources.cloud.lambda_cloud import parse_lambda
from sources.cloud.parsers import CLOUD_PARSERS
from sources.cloud.providers import NO_PRICE_API, PROVIDERS, fetch_provider
from sources.cloud.runpod import parse_runpod
from sources.cloud.vast import parse_vast
from sources.http import PoliteClient

AWS_ENV = {"AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "aws-secret-XYZ"}
GCP_KEY = "gcp-key-SECRET-123"
LAMBDA_KEY = "lambda-key-SECRET-456"
RUNPOD_KEY = "runpod-key-SECRET-789"
SECRETS = ("aws-secret-XYZ", GCP_KEY, LAMBDA_KEY, RUNPOD_KEY)
FETCHED = [p for p in PROVIDERS if p not in NO_PRICE_API]
AUTH_SHAPE = re.compile(
    r"AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/\d{8}/us-east-1/pricing/aws4_request, "
    r"SignedHeaders=[a-z0-9;-]+, Signature=[0-9a-f]{64}"
)


# --- documented response bodies ---------------------------------------------------------


def _aws_item(sku: str, instance_type: str, region: str, usd: str, reserved: str | None):
    terms: dict = {
        "OnDemand": {
            f"{sku}.JRTCKXETXF": {
                "offerTermCode": "JRTCKXETXF",
                "sku": sku,
                "termAttributes": {},
                "priceDimensions": {
                    f"{sku}.JRTCKXETXF.6YS6EN2CT7": {
                        "unit": "Hrs",
                        "pricePerUnit": {"USD": usd},
                        "description": f"${usd} per On Demand Linux {instance_type} Instance Hour",
                    }
                },
            }
        }
    }
    if reserved is not None:
        terms["Reserved"] = {
            f"{sku}.4NA7Y494T4": {
                "offerTermCode": "4NA7Y494T4",
                "sku": sku,
                "termAttributes": {
                    "LeaseContractLength": "1yr",
                    "OfferingClass": "standard",
                    "PurchaseOption": "No Upfront",
                },
                "priceDimensions": {
                    f"{sku}.4NA7Y494T4.6YS6EN2CT7": {
                        "unit": "Hrs",
                        "pricePerUnit": {"USD": reserved},
                    }
                },
            }
        }
    item = {
        "product": {
            "productFamily": "Compute Instance",
            "sku": sku,
            "attributes": {
                "instanceType": instance_type,
                "instanceFamily": "GPU instance",
                "regionCode": region,
                "location": "US East (N. Virginia)",
                "operatingSystem": "Linux",
                "tenancy": "Shared",
                "preInstalledSw": "NA",
                "capacitystatus": "Used",
                "operation": "RunInstances",
                "usagetype": f"BoxUsage:{instance_type}",
            },
        },
        "serviceCode": "AmazonEC2",
        "terms": terms,
        "version": "20250101000000",
        "publicationDate": "2025-01-01T00:00:00Z",
    }
    return json.dumps(item)  # GetProducts returns each item as a JSON string


AWS_PAGE_1 = {
    "FormatVersion": "aws_v1",
    "PriceList": [_aws_item("SKU1", "p3.2xlarge", "us-east-1", "3.0600000000", "1.9500000000")],
    "NextToken": "token-page-2",
}
AWS_PAGE_2 = {
    "FormatVersion": "aws_v1",
    "PriceList": [_aws_item("SKU2", "g5.xlarge", "us-east-1", "1.0060000000", None)],
}
AWS_EMPTY = {"FormatVersion": "aws_v1", "PriceList": []}


def _gcp_sku(sku_id: str, description: str, usage: str, units: str, nanos: int) -> dict:
    return {
        "name": f"services/6F81-5844-456A/skus/{sku_id}",
        "skuId": sku_id,
        "description": description,
        "category": {"resourceFamily": "Compute", "resourceGroup": "GPU", "usageType": usage},
        "serviceRegions": ["us-central1"],
        "pricingInfo": [
            {
                "pricingExpression": {
                    "usageUnit": "h",
                    "tieredRates": [
                        {
                            "startUsageAmount": 0,
                            "unitPrice": {"currencyCode": "USD", "units": units, "nanos": nanos},
                        }
                    ],
                }
            }
        ],
    }


GCP_PAGE_1 = {
    "skus": [_gcp_sku("A-1", "Nvidia Tesla A100 GPU running in Americas", "OnDemand", "2", 9e8)],
    "nextPageToken": "gcp-page-2",
}
GCP_PAGE_2 = {
    "skus": [_gcp_sku("L-1", "Nvidia L4 GPU running in Americas", "OnDemand", "0", 560000000)],
    "nextPageToken": "",
}
LAMBDA_BODY = {
    "data": {
        "gpu_1x_a100_sxm4": {
            "instance_type": {
                "name": "gpu_1x_a100_sxm4",
                "description": "1x A100 (40 GB SXM4)",
                "gpu_description": "A100 (40 GB SXM4)",
                "price_cents_per_hour": 129,
                "specs": {"vcpus": 30, "memory_gib": 200, "storage_gib": 512, "gpus": 1},
            },
            "regions_with_capacity_available": [{"name": "us-east-1", "description": "Virginia"}],
        }
    }
}
VAST_BODY = {
    "offers": [
        {
            "id": 101,
            "machine_id": 7,
            "gpu_name": "RTX 4090",
            "num_gpus": 2,
            "gpu_ram": 24564,
            "dph_total": 0.71,
            "min_bid": 0.4,
            "reliability2": 0.99,
            "geolocation": "Denmark, DK",
            "rentable": True,
        }
    ]
}
RUNPOD_BODY = {
    "data": {
        "gpuTypes": [
            {
                "id": "NVIDIA A100 80GB PCIe",
                "displayName": "A100 PCIe",
                "memoryInGb": 80,
                "secureCloud": True,
                "communityCloud": True,
                "securePrice": 1.64,
                "communityPrice": 1.19,
                "secureSpotPrice": 0.82,
                "communitySpotPrice": None,
            }
        ]
    }
}


# --- the local server -------------------------------------------------------------------


class _Server:
    """A local stand-in for every provider's endpoint, recording what it was sent."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.fail: set[str] = set()  # route names answered with HTTP 500
        self.raw: dict[str, bytes] = {}  # route name -> body served instead
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - http.server's name
                outer.handle(self, b"")

            def do_POST(self):  # noqa: N802 - http.server's name
                length = int(self.headers.get("Content-Length") or 0)
                outer.handle(self, self.rfile.read(length))

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.origin = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def base_urls(self) -> dict[str, str]:
        return {
            "aws": f"{self.origin}/aws/",
            "azure": f"{self.origin}/azure/api/retail/prices",
            "gcp": f"{self.origin}/gcp/v1/services/6F81-5844-456A/skus",
            "lambda": f"{self.origin}/lambda/api/v1/instance-types",
            "vast": f"{self.origin}/vast/api/v0/bundles/",
            "runpod": f"{self.origin}/runpod/graphql",
        }

    def __enter__(self) -> "_Server":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    def handle(self, handler: BaseHTTPRequestHandler, body: bytes) -> None:
        parts = urlsplit(handler.path)
        route = parts.path.split("/")[1]
        headers = {name.lower(): value for name, value in handler.headers.items()}
        self.requests.append(
            {
                "method": handler.command,
                "route": route,
                "path": handler.path,
                "query": parse_qs(parts.query),
                "headers": headers,
                "body": body,
            }
        )
        if route in self.fail:
            return self._send(handler, 500, b'{"error": "internal"}')
        if route in self.raw:
            return self._send(handler, 200, self.raw[route])
        status, payload = getattr(self, f"_{route}")(headers, parse_qs(parts.query), body)
        self._send(handler, status, json.dumps(payload).encode())

    @staticmethod
    def _send(handler: BaseHTTPRequestHandler, status: int, body: bytes) -> None:
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    # One method per route: (status, JSON payload).

    def _aws(self, headers, query, body):
        if headers.get("x-amz-target") != AWS_TARGET or "authorization" not in headers:
            return 400, {"__type": "MissingAuthenticationTokenException"}
        request = json.loads(body)
        region = next(f["Value"] for f in request["Filters"] if f["Field"] == "regionCode")
        if region != "us-east-1":
            return 200, AWS_EMPTY
        return 200, AWS_PAGE_2 if request.get("NextToken") == "token-page-2" else AWS_PAGE_1

    def _azure(self, headers, query, body):
        items = [
            {
                "currencyCode": "USD",
                "retailPrice": 3.06,
                "armRegionName": "eastus",
                "armSkuName": "Standard_NC24ads_A100_v4",
                "productName": "NC A100 v4 Series",
                "skuName": "NC24ads A100 v4",
                "serviceName": "Virtual Machines",
                "unitOfMeasure": "1 Hour",
                "type": "Consumption",
            }
        ]
        return 200, {"Items": items, "NextPageLink": None, "Count": 1}

    def _gcp(self, headers, query, body):
        if headers.get("x-goog-api-key") != GCP_KEY:
            return 403, {"error": {"code": 403, "status": "PERMISSION_DENIED"}}
        return 200, GCP_PAGE_2 if query.get("pageToken") == ["gcp-page-2"] else GCP_PAGE_1

    def _lambda(self, headers, query, body):
        if headers.get("authorization") != f"Bearer {LAMBDA_KEY}":
            return 401, {"error": {"code": "global/invalid-api-key", "message": "bad key"}}
        return 200, LAMBDA_BODY

    def _vast(self, headers, query, body):
        if "q" not in query:
            return 400, {"error": "missing q"}
        return 200, VAST_BODY

    def _runpod(self, headers, query, body):
        if headers.get("authorization") != f"Bearer {RUNPOD_KEY}":
            return 200, {"errors": [{"message": "Unauthorized"}]}
        if "gpuTypes" not in json.loads(body).get("query", ""):
            return 200, {"errors": [{"message": "bad query"}]}
        return 200, RUNPOD_BODY

    def of(self, route: str) -> list[dict]:
        return [request for request in self.requests if request["route"] == route]


@pytest.fixture
def server():
    with _Server() as running:
        yield running


@pytest.fixture
def archive(tmp_path) -> Archive:
    return Archive(tmp_path / "archive")


@pytest.fixture
def client(archive):
    with PoliteClient(
        archive=archive, respect_robots=False, min_interval_per_host=0, sleep=lambda s: None
    ) as polite:
        yield polite


def _offers(report: FetchReport) -> list:
    parser = CLOUD_PARSERS[report.provider]
    return [offer for body in report.contents() for offer in parser(body)]


def _archived_text(archive: Archive) -> str:
    """Everything the archive wrote: index lines and blobs."""
    return "\n".join(
        path.read_bytes().decode("utf-8", "replace")
        for path in archive.root.rglob("*")
        if path.is_file()
    )


# --- AWS --------------------------------------------------------------------------------


def test_aws_get_products_pages_are_signed_and_converted_for_parse_aws(server, client):
    report = fetch_provider("aws", client, AWS_ENV, base_urls=server.base_urls)
    assert report.status == "ok"
    requests = server.of("aws")
    # us-east-1: two pages (NextToken); the other default regions: one empty page each.
    assert len(requests) == 2 + len(AWS_REGIONS) - 1 == len(report.results)
    for request in requests:
        assert request["method"] == "POST"
        assert request["headers"]["x-amz-target"] == AWS_TARGET
        assert request["headers"]["content-type"] == "application/x-amz-json-1.1"
        assert AUTH_SHAPE.fullmatch(request["headers"]["authorization"])
        assert re.fullmatch(r"\d{8}T\d{6}Z", request["headers"]["x-amz-date"])
    first = json.loads(requests[0]["body"])
    assert first["ServiceCode"] == "AmazonEC2" and first["FormatVersion"] == "aws_v1"
    filters = {f["Field"]: f["Value"] for f in first["Filters"]}
    assert all(f["Type"] == "TERM_MATCH" for f in first["Filters"])
    assert filters == {
        "instanceFamily": "GPU instance",
        "operatingSystem": "Linux",
        "tenancy": "Shared",
        "preInstalledSw": "NA",
        "capacitystatus": "Used",
        "regionCode": "us-east-1",
    }
    assert "NextToken" not in first
    assert json.loads(requests[1]["body"])["NextToken"] == "token-page-2"

    bodies = report.contents()
    assert len(bodies) == 4
    offers = {(o.instance_type, o.price_type): o for o in _offers(report)}
    assert set(offers) == {
        ("p3.2xlarge", "on_demand"),
        ("p3.2xlarge", "reserved_1y"),
        ("g5.xlarge", "on_demand"),
    }
    assert offers["p3.2xlarge", "on_demand"].usd_per_hour == pytest.approx(3.06)
    assert offers["p3.2xlarge", "on_demand"].gpu == "v100-sxm2-16gb"
    assert offers["g5.xlarge", "on_demand"].region == "us-east-1"
    assert offers["g5.xlarge", "on_demand"].gpu == "a10g"
    assert parse_aws(bodies[2]) == []  # us-west-2: an empty page is a valid offer file


def _sigv4(method, url, headers, signed_names, body, secret, region, service, amz_date):
    """AWS Signature Version 4, written out from AWS's published steps (independent of the
    library that signs our requests)."""
    parts = urlsplit(url)
    canonical = "\n".join(
        [
            method,
            parts.path or "/",
            parts.query,
            "".join(f"{name}:{' '.join(headers[name].split())}\n" for name in signed_names),
            ";".join(signed_names),
            hashlib.sha256(body).hexdigest(),
        ]
    )
    scope = f"{amz_date[:8]}/{region}/{service}/aws4_request"
    to_sign = "\n".join(
        ["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(canonical.encode()).hexdigest()]
    )
    key = f"AWS4{secret}".encode()
    for part in (amz_date[:8], region, service, "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    return hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()


def test_aws_signature_verifies_with_the_secret(server, client):
    env = {**AWS_ENV, "AWS_SESSION_TOKEN": "session-token-abc"}
    fetch_provider("aws", client, env, base_urls=server.base_urls, max_pages=1)
    request = server.of("aws")[0]
    headers = request["headers"]
    assert headers["x-amz-security-token"] == "session-token-abc"
    authorization = headers["authorization"]
    assert authorization.startswith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/")
    assert "/us-east-1/pricing/aws4_request" in authorization
    signed_names = re.search(r"SignedHeaders=([^,]+)", authorization)[1].split(";")
    assert {"host", "x-amz-date", "x-amz-target", "x-amz-security-token"} <= set(signed_names)
    expected = _sigv4(
        "POST",
        server.base_urls["aws"],
        headers,
        signed_names,
        request["body"],
        "aws-secret-XYZ",
        "us-east-1",
        "pricing",
        headers["x-amz-date"],
    )
    assert re.search(r"Signature=([0-9a-f]{64})", authorization)[1] == expected
    assert "aws-secret-XYZ" not in json.dumps(request["headers"])


def test_aws_max_pages_bounds_each_region(server, client):
    report = fetch_provider("aws", client, AWS_ENV, base_urls=server.base_urls, max_pages=1)
    assert report.status == "ok"
    assert len(server.of("aws")) == len(AWS_REGIONS)  # page 2 of us-east-1 not requested


def test_aws_offer_file_conversion_accepts_objects_and_rejects_garbage():
    page = {"PriceList": [json.loads(_aws_item("S", "g6.xlarge", "eu-west-1", "0.8", None))]}
    converted = json.loads(aws_offer_file(json.dumps(page).encode()))
    assert set(converted["products"]) == {"S"}
    assert set(converted["terms"]["OnDemand"]) == {"S"}
    assert converted["terms"]["Reserved"] == {}
    with pytest.raises(ValueError, match="PriceList"):
        aws_offer_file(b'{"Message": "nope"}')


# --- GCP, Lambda, vast, RunPod, Azure ---------------------------------------------------


def test_gcp_two_pages_with_the_key_only_in_a_header(server, client, archive):
    report = fetch_provider("gcp", client, {"GCP_API_KEY": GCP_KEY}, base_urls=server.base_urls)
    assert report.status == "ok"
    requests = server.of("gcp")
    assert len(requests) == 2
    for request in requests:
        assert request["headers"]["x-goog-api-key"] == GCP_KEY
        assert GCP_KEY not in request["path"]
        assert request["query"]["currencyCode"] == ["USD"]
        assert request["query"]["pageSize"] == ["5000"]
    assert "pageToken" not in requests[0]["query"]
    assert requests[1]["query"]["pageToken"] == ["gcp-page-2"]
    assert [GCP_KEY not in result.url for result in report.results] == [True, True]
    archived = [result.archived for result in report.results]
    assert all(entry is not None and GCP_KEY not in entry.url for entry in archived)
    assert GCP_KEY not in _archived_text(archive)
    offers = _offers(report)
    assert {(o.gpu, o.region) for o in offers} == {
        ("a100-sxm4-40gb", "us-central1"),
        ("l4", "us-central1"),
    }
    assert [len(parse_gcp(body)) for body in report.contents()] == [1, 1]


def test_lambda_sends_the_key_as_bearer(server, client):
    report = fetch_provider(
        "lambda", client, {"LAMBDA_API_KEY": LAMBDA_KEY}, base_urls=server.base_urls
    )
    assert report.status == "ok"
    (request,) = server.of("lambda")
    assert request["method"] == "GET"
    assert request["headers"]["authorization"] == f"Bearer {LAMBDA_KEY}"
    (offer,) = [o for body in report.contents() for o in parse_lambda(body)]
    assert offer.instance_type == "gpu_1x_a100_sxm4"
    assert offer.usd_per_hour == pytest.approx(1.29)


def test_vast_searches_rentable_verified_gpu_offers(server, client):
    report = fetch_provider("vast", client, {}, base_urls=server.base_urls)
    assert report.status == "ok"
    (request,) = server.of("vast")
    assert "authorization" not in request["headers"]
    query = json.loads(request["query"]["q"][0])
    assert query["rentable"] == {"eq": True}
    assert query["verified"] == {"eq": True}
    assert query["num_gpus"] == {"gte": 1}
    assert query["order"] == [["dph_total", "asc"]]
    offers = [o for body in report.contents() for o in parse_vast(body)]
    assert {o.price_type for o in offers} == {"on_demand", "spot"}
    assert all(o.gpu_count == 2 for o in offers)


def test_vast_sends_an_optional_key_as_bearer(server, client):
    fetch_provider("vast", client, {"VAST_API_KEY": "vast-k"}, base_urls=server.base_urls)
    assert server.of("vast")[0]["headers"]["authorization"] == "Bearer vast-k"


def test_runpod_graphql_post(server, client):
    report = fetch_provider(
        "runpod", client, {"RUNPOD_API_KEY": RUNPOD_KEY}, base_urls=server.base_urls
    )
    assert report.status == "ok"
    (request,) = server.of("runpod")
    assert request["method"] == "POST"
    assert request["headers"]["authorization"] == f"Bearer {RUNPOD_KEY}"
    assert RUNPOD_KEY not in request["path"]
    query = json.loads(request["body"])["query"]
    for field in ("gpuTypes", "securePrice", "communityPrice", "secureSpotPrice", "memoryInGb"):
        assert field in query
    offers = [o for body in report.contents() for o in parse_runpod(body)]
    assert len(offers) == 3
    assert {o.gpu for o in offers} == {"a100-pcie-80gb"}


def test_runpod_graphql_errors_with_http_200_fail(server, client):
    report = fetch_provider(
        "runpod", client, {"RUNPOD_API_KEY": "wrong"}, base_urls=server.base_urls
    )
    assert report.status.startswith("failed: page 1: unreadable body")
    assert "wrong" not in report.status
    assert report.contents() == []


def test_azure_goes_through_fetch_azure(server, client):
    report = fetch_provider("azure", client, {}, base_urls=server.base_urls)
    assert report.status == "ok"
    assert len(report.results) == len(server.of("azure")) == 1
    (offer,) = _offers(report)
    assert offer.instance_type == "Standard_NC24ads_A100_v4"


# --- skipped and failed -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("provider", "env"),
    [
        ("aws", {}),
        ("aws", {"AWS_ACCESS_KEY_ID": "AKIDEXAMPLE"}),
        ("gcp", {"GCP_API_KEY": "  "}),
        ("lambda", {}),
        ("runpod", {}),
    ],
)
def test_missing_credentials_skip_without_a_request(server, client, provider, env):
    report = fetch_provider(provider, client, env, base_urls=server.base_urls)
    assert report.status.startswith("skipped: ")
    assert report.results == ()
    assert report.contents() == []
    assert server.requests == []


def test_aws_skip_names_the_missing_credentials(server, client):
    report = fetch_provider("aws", client, {}, base_urls=server.base_urls)
    assert report.status == "skipped: no AWS credentials"


ALL_ENV = {**AWS_ENV, "GCP_API_KEY": GCP_KEY, "LAMBDA_API_KEY": LAMBDA_KEY}
ALL_ENV["RUNPOD_API_KEY"] = RUNPOD_KEY


@pytest.mark.parametrize("provider", FETCHED)
def test_a_500_on_the_first_page_fails_without_raising(server, client, provider):
    server.fail.add(provider)
    report = fetch_provider(provider, client, ALL_ENV, base_urls=server.base_urls)
    assert report.status.startswith("failed: ")
    assert "500" in report.status
    assert len(report.results) == 1 and report.results[0].status == 500
    assert report.contents() == []
    assert not any(secret in report.status for secret in SECRETS)


@pytest.mark.parametrize("provider", [p for p in FETCHED if p != "azure"])
def test_an_unreadable_first_page_fails(server, client, provider):
    server.raw[provider] = b"<html>Service temporarily unavailable</html>"
    report = fetch_provider(provider, client, ALL_ENV, base_urls=server.base_urls)
    assert report.status.startswith("failed: ")
    assert "unreadable body" in report.status
    assert len(report.results) == 1
    assert report.contents() == []


def test_a_blocked_host_fails(server, archive):
    def classify(url, status, content):
        return "captcha" if b"A100" in content else None

    with PoliteClient(
        archive=archive,
        respect_robots=False,
        min_interval_per_host=0,
        sleep=lambda s: None,
        classify=classify,
    ) as polite:
        report = fetch_provider("lambda", polite, ALL_ENV, base_urls=server.base_urls)
    assert report.status.startswith("failed: page 1: captcha")


def test_unreachable_host_fails(client):
    # A port that was just free: the connection is refused, retried, then given up.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    report = fetch_provider("vast", client, {}, base_urls={"vast": f"http://127.0.0.1:{port}/"})
    assert report.status.startswith("failed: page 1: http_error")
    assert report.results[0].status is None


def test_unknown_provider_raises(client):
    with pytest.raises(ValueError, match="unknown cloud provider"):
        fetch_provider("oracle", client, {})


def test_no_secret_reaches_the_archive_or_the_results(server, client, archive):
    reports = [
        fetch_provider(provider, client, ALL_ENV, base_urls=server.base_urls)
        for provider in ("aws", "gcp", "lambda", "runpod")
    ]
    assert [report.status for report in reports] == ["ok"] * 4
    text = _archived_text(archive)
    assert text  # something was archived
    for secret in SECRETS:
        assert secret not in text
        assert all(secret not in result.url for r in reports for result in r.results)


@pytest.mark.parametrize("provider", sorted(NO_PRICE_API))
def test_providers_without_a_price_api_are_skipped_without_a_request(server, client, provider):
    report = fetch_provider(provider, client, ALL_ENV, base_urls=server.base_urls)
    assert report.status.startswith("skipped: ") and "bundled offers only" in report.status
    assert report.results == () and report.contents() == []
    assert server.requests == []
