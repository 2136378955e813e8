"""`python -m sources parse lambda-csv|nvidia-dle|mlperf <file>`: one JSON object per figure.

Keys: gpu, gpu_name, model, task, precision, num_gpus, batch_size_per_gpu, throughput, unit,
flags (the parse-time flags; cross-row flags need the whole set, see `flags`), plus format
extras (MLPerf: minutes, round/scenario). A summary with skipped and unknown-GPU counts goes
to stderr.
"""

import datetime as dt
import json
import sys
from pathlib import Path

from sources.benchmarks.flags import flag_benchmarks
from sources.benchmarks.lambda_csv import batch_size_file_for, parse_lambda_csv, precision_of
from sources.benchmarks.mlperf import parse_mlperf
from sources.benchmarks.nvidia_dle import parse_dle_readme
from sources.benchmarks.records import MalformedFile, records_frame

BENCHMARK_FORMATS = ("lambda-csv", "nvidia-dle", "mlperf")


def parse_benchmark_command(fmt: str, path: Path, batch_sizes: Path | None = None) -> int:
    """Print the figures of one benchmark file; exit code 2 when it cannot be read."""
    try:
        content = path.read_bytes()
        if fmt == "lambda-csv":
            pair = batch_sizes or batch_size_file_for(path)
            parsed = parse_lambda_csv(
                content,
                pair.read_bytes() if pair.exists() else None,
                precision=precision_of(path),
                software_era="lambda",
                as_of=dt.date.today(),
                citation=path.name,
                source_file=str(path),
            )
        elif fmt == "nvidia-dle":
            parsed = parse_dle_readme(content, readme_path=path.name, as_of=dt.date.today())
        else:
            parsed = parse_mlperf(content, source_file=str(path))
    except OSError as exc:
        print(f"error: cannot read {exc.filename}: {exc.strerror}", file=sys.stderr)
        return 2
    except MalformedFile as exc:
        print(f"error: {path} is not a valid {fmt} file: {exc}", file=sys.stderr)
        return 2
    # Cross-row flags (super_linear, batch_changed, outlier) over this file's figures.
    flagged = flag_benchmarks(records_frame(parsed.records))["flags"].to_list()
    known = iter(flagged)
    for record in parsed.records:
        line = record.to_cli()
        if record.gpu is not None:
            line["flags"] = next(known)
        print(json.dumps(line, ensure_ascii=False, default=str))
    summary = f"ok: {len(parsed.records)} figures"
    if parsed.skipped:
        summary += "; skipped " + ", ".join(f"{k}: {v}" for k, v in sorted(parsed.skipped.items()))
    if parsed.unknown_gpus:
        summary += "; unknown GPU names: " + ", ".join(
            f"{k} ({v})" for k, v in sorted(parsed.unknown_gpus.items())
        )
    print(summary, file=sys.stderr)
    return 0
