"""The site's search: a Pagefind index of every page of one version, written inside it.

Run once the version folder is complete (every page written) and before the release is
published: `index_version` writes `<version>/pagefind/` (the index, Pagefind's own UI
script and stylesheet, its WebAssembly) and `<version>/search.js` (which mounts the UI on
the page's search box). Each version searches its own pages only, and a published version
never changes, so old versions keep the index they were published with.

The binary comes from PyPI (`pagefind[bin]`, pinned in uv.lock), so `make env` installs it
offline from any other network; it runs as a subprocess with a timeout. A failure to index
raises `SearchIndexError`, which fails the build before anything is published: a version
is kept for good, and one published without its index would show a search box that can
never work (docs/site.md, "Search").
"""

import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

BUNDLE = "pagefind"
SCRIPT = "search.js"
# Indexing the bundled snapshot's ~170 pages takes about a second (docs/performance.md); the
# bound is there so a hung binary fails the build instead of holding the night's release.
TIMEOUT_S = 300.0
_COUNT = re.compile(r"Indexed (\d+) (pages?|words?)")


class SearchIndexError(RuntimeError):
    """Pagefind could not index a version folder; the version must not be published."""


@dataclass(frozen=True)
class SearchIndex:
    """What `index_version` indexed and how long it took."""

    folder: Path
    html_files: int
    pages: int
    words: int
    seconds: float


def pagefind_executable() -> Path:
    """The Pagefind binary shipped by the `pagefind-bin` wheel."""
    try:
        import pagefind_bin  # noqa: PLC0415 - imported here so a missing wheel is our error

        return pagefind_bin.get_executable()
    except (ImportError, FileNotFoundError) as error:
        raise SearchIndexError(
            f"the Pagefind binary is missing ({error}); it comes with the pagefind[bin] "
            "dependency: run `make env` (uv sync --frozen)"
        ) from error


def html_files(folder: Path) -> list[Path]:
    """The version's pages: every `.html` file outside Pagefind's own bundle."""
    return sorted(
        p for p in folder.rglob("*.html") if BUNDLE not in p.relative_to(folder).parts[:1]
    )


def _counts(output: str) -> dict[str, int]:
    """{'pages': n, 'words': n} from Pagefind's summary lines ('Indexed 170 pages')."""
    return {unit.rstrip("s") + "s": int(n) for n, unit in _COUNT.findall(output)}


def _tail(text: str, lines: int = 15) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def index_version(
    folder: Path, timeout: float = TIMEOUT_S, executable: Path | None = None
) -> SearchIndex:
    """Index every page of the version in `folder` into `folder/pagefind/`; add search.js.

    Only content is indexed: the navigation, the search box and the footer carry
    `data-pagefind-ignore` (templates/base.html.j2). Every page must be indexed; anything
    else (binary missing, non-zero exit, timeout, a page left out, no bundle written)
    raises `SearchIndexError` naming the folder and what Pagefind printed.
    """
    folder = Path(folder)
    pages = html_files(folder)
    if not pages:
        raise SearchIndexError(f"no HTML page to index in {folder}")
    binary = executable or pagefind_executable()
    shutil.rmtree(folder / BUNDLE, ignore_errors=True)
    shutil.copyfile(resources.files("reports").joinpath("static", SCRIPT), folder / SCRIPT)
    command = [
        str(binary),
        "--site",
        str(folder),
        "--output-subdir",
        BUNDLE,
        # Result links name the file (gpu/x.html, index.html): they work from any static
        # server, and from a folder served without directory indexes.
        "--keep-index-url",
        # Every page is English; one language keeps one index whatever a template's lang.
        "--force-language",
        "en",
    ]
    start = time.perf_counter()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as error:
        raise SearchIndexError(f"Pagefind took over {timeout:g} s to index {folder}") from error
    except OSError as error:
        raise SearchIndexError(f"Pagefind could not start ({binary}): {error}") from error
    seconds = time.perf_counter() - start
    output = f"{done.stdout}\n{done.stderr}"
    if done.returncode != 0:
        raise SearchIndexError(
            f"Pagefind failed to index {folder} (exit {done.returncode}):\n{_tail(output)}"
        )
    counts = _counts(done.stdout)
    if counts.get("pages") != len(pages):
        raise SearchIndexError(
            f"Pagefind indexed {counts.get('pages', 0)} of the {len(pages)} pages in {folder}:"
            f"\n{_tail(output)}"
        )
    for name in ("pagefind-entry.json", "pagefind.js", "pagefind-ui.js", "pagefind-ui.css"):
        if not (folder / BUNDLE / name).is_file():
            raise SearchIndexError(f"Pagefind wrote no {BUNDLE}/{name} in {folder}")
    return SearchIndex(folder, len(pages), counts["pages"], counts.get("words", 0), seconds)
