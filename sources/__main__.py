"""`python -m sources`: inspect a captured page, or match listing titles to GPUs.

    python -m sources parse amazon page.html   # one JSON object per record on stdout
    python -m sources parse ebay page.html
    python -m sources parse azure prices.json  # aws, azure, gcp, lambda, vast, runpod, skypilot
    python -m sources parse gpuhunt out.json   # aggregators (gpuhunt, primeintellect):
                                               # reference prices, not offers
    python -m sources parse lambda-csv pytorch-train-throughput-fp16.csv \
        --batch-sizes pytorch-train-bs-fp16.csv  # benchmarks: lambda-csv, nvidia-dle, mlperf
    python -m sources parse nvidia-dle README.md
    python -m sources parse mlperf summary_results.csv
    python -m sources match "ASUS TUF RTX 4090 OC 24GB"
    python -m sources match - < titles.txt

Exit codes: 0 parsed (or matched); 2 usage error, unreadable file, or a page that could
not be parsed (the reason on stderr); 3 the page is a bot check or block page (captcha or
blocked: nothing on stdout, the outcome on stderr). Output is strict JSON (never NaN or
Infinity). A reader that closes the pipe early (`| head`) ends the command quietly.
"""

import argparse
import json
import os
import sys
from pathlib import Path

from sources.benchmarks.cli import BENCHMARK_FORMATS, parse_benchmark_command
from sources.bundled import bundled_catalog
from sources.cloud.parsers import CLOUD_PARSERS as FORMAT_PARSERS
from sources.cloud.parsers import EMPTY_NOTES, REFERENCE_NOTES, REFERENCE_PARSERS
from sources.cloud.providers import PROVIDERS
from sources.cloud.records import MalformedFile
from sources.retail.ingest import PARSERS
from sources.retail.records import Outcome

# Every registry provider's parser, plus catalog formats we can inspect but do not load.
CLOUD_PARSERS = {**FORMAT_PARSERS, **{name: p.parse for name, p in PROVIDERS.items()}}
EXIT_BLOCKED = 3
EXIT_UNPARSED = 2


def parse_command(source: str, path: Path, url: str | None) -> int:
    """Print one JSON object per record of a captured retail page."""
    try:
        content = path.read_bytes()
    except OSError as exc:
        print(f"error: cannot read {path}: {exc.strerror}", file=sys.stderr)
        return 2
    result = PARSERS[source](content, url)
    if result.outcome in (Outcome.CAPTCHA, Outcome.BLOCKED):
        print(f"{result.outcome}: {result.detail or result.page_kind}", file=sys.stderr)
        return EXIT_BLOCKED
    if result.outcome in (Outcome.PARSE_ERROR, Outcome.HTTP_ERROR):
        print(f"{result.outcome}: {result.detail}", file=sys.stderr)
        return EXIT_UNPARSED
    for record in result.records:
        print(json.dumps(record.to_cli(), ensure_ascii=False, allow_nan=False))
    summary = f"{result.outcome}: {result.page_kind} page, {len(result.records)} records"
    if result.dropped:
        summary += ", dropped " + ", ".join(f"{k}: {v}" for k, v in sorted(result.dropped.items()))
    print(summary, file=sys.stderr)
    return 0


def parse_cloud_command(provider: str, path: Path) -> int:
    """Print one JSON object per offer (or aggregator reference price) in a price file."""
    try:
        content = path.read_bytes()
    except OSError as exc:
        print(f"error: cannot read {path}: {exc.strerror}", file=sys.stderr)
        return 2
    parser = CLOUD_PARSERS.get(provider) or REFERENCE_PARSERS[provider]
    try:
        records = parser(content)
    except MalformedFile as exc:
        print(f"error: {path} is not a valid {provider} price file: {exc}", file=sys.stderr)
        return 2
    for record in records:
        print(json.dumps(record.to_cli(), ensure_ascii=False, allow_nan=False))
    unknown = sorted({r.gpu_name for r in records if r.gpu is None})
    if provider in REFERENCE_PARSERS:
        summary = f"ok: {len(records)} reference prices; {REFERENCE_NOTES[provider]}"
        if unknown:
            summary += f"; GPU not pinned to one catalog GPU: {', '.join(unknown)}"
    else:
        summary = f"ok: {len(records)} offers"
        if unknown:
            summary += f"; unknown GPU names: {', '.join(unknown)}"
        note = EMPTY_NOTES[provider](content) if provider in EMPTY_NOTES and not records else None
        if note:
            summary += f"; {note}"
    print(summary, file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the process exit code (0 when the reader closed the pipe)."""
    try:
        code = _main(argv)
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        # The reader (`head`) has all it wants. Point stdout at /dev/null so that the
        # interpreter's own flush at exit does not raise a second time.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0


def _main(argv: list[str] | None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sources", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    parse = commands.add_parser("parse", help="print the records of a captured page as JSON")
    parse.add_argument(
        "source",
        choices=sorted({*PARSERS, *CLOUD_PARSERS, *REFERENCE_PARSERS, *BENCHMARK_FORMATS}),
    )
    parse.add_argument("file", type=Path)
    parse.add_argument("--url", help="the page's URL (sets the marketplace's currency)")
    parse.add_argument("--batch-sizes", type=Path, help="lambda-csv: the matching -bs- table")
    match = commands.add_parser("match", help="match listing titles to catalog GPUs")
    match.add_argument("title", help='a title, or "-" to read titles from stdin, one per line')
    args = parser.parse_args(argv)
    if args.command == "parse":
        if args.source in BENCHMARK_FORMATS:
            return parse_benchmark_command(args.source, args.file, args.batch_sizes)
        if args.source in CLOUD_PARSERS or args.source in REFERENCE_PARSERS:
            return parse_cloud_command(args.source, args.file)
        return parse_command(args.source, args.file, args.url)
    from sources.catalog import match_command

    return match_command([args.title], sys.stdin, sys.stdout, bundled_catalog())


if __name__ == "__main__":
    sys.exit(main())
