"""Cloud price files that lie: every malformed number or structure is `MalformedFile`.

`MalformedFile` is the documented bad-input error; the CLI turns it into exit 2. Nothing
else may escape a parser: no RecursionError, OverflowError or ValueError, and no NaN,
Infinity or 1e308 in an offer.
"""

import json
import subprocess
import sys

import pytest

from sources.__main__ import main
from sources.cloud import fetch
from sources.cloud.parsers import CLOUD_PARSERS, REFERENCE_PARSERS
from sources.cloud.records import CloudOffer, MalformedFile

HEADER = "InstanceType,AcceleratorName,AcceleratorCount,GpuInfo,Price,SpotPrice,Region\n"
ALL_PARSERS = {**CLOUD_PARSERS, **REFERENCE_PARSERS}


def skypilot(count: str = "1", price: str = "2.0", spot: str = "") -> bytes:
    return (HEADER + f"g1,A100,{count},,{price},{spot},us-east-1\n").encode()


@pytest.mark.parametrize("count", ["Infinity", "NaN", "-inf", "1e9", "257"])
def test_skypilot_gpu_count_that_is_not_a_count(count):
    with pytest.raises(MalformedFile, match="AcceleratorCount"):
        CLOUD_PARSERS["skypilot"](skypilot(count=count))


@pytest.mark.parametrize("price", ["Infinity", "NaN", "1e308", "-2.0", "5000"])
def test_skypilot_price_that_is_not_a_price(price):
    with pytest.raises(MalformedFile):
        CLOUD_PARSERS["skypilot"](skypilot(price=price))
    with pytest.raises(MalformedFile):
        CLOUD_PARSERS["skypilot"](skypilot(spot=price))


def test_valid_skypilot_row_still_parses():
    (offer,) = CLOUD_PARSERS["skypilot"](skypilot())
    assert (offer.gpu_count, offer.usd_per_hour) == (1, 2.0)


@pytest.mark.parametrize("name", sorted(ALL_PARSERS))
@pytest.mark.parametrize(
    "content",
    [
        b"[" * 100_000 + b"]" * 100_000,
        b'{"a":' * 50_000 + b"1" + b"}" * 50_000,
        b'{"Items": [{"retailPrice": NaN}]}',
        b'{"Items": [{"retailPrice": Infinity}]}',
        b'{"Items": [{"retailPrice": 1e400}]}',
        b'{"skus": [' + b"9" * 5000 + b"]}",
        b"\xff\xfe\x00garbage",
    ],
    ids=["deep-list", "deep-object", "nan", "infinity", "overflow", "huge-int", "binary"],
)
def test_hostile_json_is_malformed_for_every_parser(name, content):
    with pytest.raises(MalformedFile):
        ALL_PARSERS[name](content)


def test_offer_with_non_finite_or_absurd_numbers_cannot_exist():
    base = {
        "provider": "aws",
        "instance_type": "p4d.24xlarge",
        "region": "us-east-1",
        "price_type": "on_demand",
        "gpu": "a100-40gb-sxm",
        "gpu_name": "A100",
    }
    for count, price in [(8, float("inf")), (8, float("nan")), (8, 1e308), (8, 0.0), (0, 1.0)]:
        with pytest.raises(MalformedFile):
            CloudOffer(gpu_count=count, usd_per_hour=price, **base)
    assert CloudOffer(gpu_count=8, usd_per_hour=32.77, **base).usd_per_gpu_hour == 32.77 / 8


@pytest.mark.parametrize("provider", ["aws", "azure", "gcp", "lambda", "vast", "runpod"])
def test_fetch_body_check_turns_deep_nesting_into_malformed(provider):
    with pytest.raises(MalformedFile):
        fetch._parser_body(provider, b"[" * 100_000 + b"]" * 100_000)


@pytest.mark.parametrize(
    ("provider", "content"),
    [
        ("skypilot", skypilot(count="Infinity")),
        ("skypilot", skypilot(count="NaN")),
        ("skypilot", skypilot(price="1e308")),
        ("azure", b"[" * 100_000 + b"]" * 100_000),
        ("gcp", b'{"skus": [{"description": "x", "pricingInfo": NaN}]}'),
    ],
)
def test_cli_exits_2_on_bad_cloud_files(provider, content, tmp_path, capsys):
    path = tmp_path / "bad"
    path.write_bytes(content)
    assert main(["parse", provider, str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "not a valid" in captured.err


def test_cli_output_is_strict_json(tmp_path, capsys):
    path = tmp_path / "vms.csv"
    path.write_bytes(skypilot(price="3.5"))
    assert main(["parse", "skypilot", str(path)]) == 0
    for line in capsys.readouterr().out.splitlines():
        json.loads(line, parse_constant=lambda name: pytest.fail(f"{name} in CLI output"))


def test_cli_exits_quietly_when_the_reader_closes_the_pipe(tmp_path):
    # Far more output than a pipe buffers, so the writer meets the closed pipe.
    rows = "".join(f"g{i},A100,1,,2.0,1.0,us-east-{i}\n" for i in range(5000))
    path = tmp_path / "vms.csv"
    path.write_text(HEADER + rows)
    out = subprocess.run(
        f"{sys.executable} -m sources parse skypilot {path} | head -c 1; exit ${{PIPESTATUS[0]}}",
        executable="/bin/bash",
        shell=True,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.stdout == "{"
    assert out.returncode == 0
    assert "Traceback" not in out.stderr
    assert "BrokenPipe" not in out.stderr
