"""The matcher on hand-labelled listing titles: a tuning set and an untuned held-out set.

`titles_labelled.csv` holds the titles the rules were written against, one case per row.
`titles_holdout.csv` was written before the issue-11 matcher changes and never tuned on:
only its accuracy is asserted (docs/data.md reports the figures).
"""

import csv
from dataclasses import dataclass
from pathlib import Path

import pytest

from sources.bundled import bundled_catalog
from sources.catalog import match_title
from tests.paths import FIXTURES_ROOT

CATALOG = bundled_catalog()
FIXTURES = FIXTURES_ROOT
LABELLED = FIXTURES / "titles_labelled.csv"
HOLDOUT = FIXTURES / "titles_holdout.csv"


def read_titles(path: Path) -> list[dict[str, str]]:
    """Rows of a labelled-title file (comment lines start with #)."""
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(line for line in handle if not line.startswith("#")))


@dataclass(frozen=True)
class Score:
    """Accuracy of the matcher on a labelled set."""

    cards: int  # titles that sell one catalog GPU
    right: int  # ... matched to that GPU
    wrong: int  # ... matched to another GPU
    junk: int  # titles that are no catalog card (accessory, lot, laptop, unknown, ...)
    accepted: int  # ... matched to a GPU anyway

    @property
    def right_share(self) -> float:
        return self.right / self.cards

    @property
    def accepted_share(self) -> float:
        return self.accepted / self.junk


def score(rows: list[dict[str, str]]) -> Score:
    """How the matcher does on labelled rows."""
    cards = right = wrong = junk = accepted = 0
    for row in rows:
        expected, got = row["expected_gpu"] or None, match_title(row["title"], CATALOG).gpu
        if expected is None:
            junk += 1
            accepted += got is not None
        else:
            cards += 1
            right += got == expected
            wrong += got is not None and got != expected
    return Score(cards, right, wrong, junk, accepted)


LABELLED_ROWS = read_titles(LABELLED)


def test_label_files_are_large_and_name_catalog_gpus_only():
    ids = CATALOG.gpu_ids
    for path, minimum in ((LABELLED, 150), (HOLDOUT, 100)):
        rows = read_titles(path)
        assert len(rows) >= minimum, path.name
        assert {r["expected_gpu"] for r in rows if r["expected_gpu"]} <= ids, path.name
        assert len({r["title"] for r in rows}) == len(rows), f"duplicate title in {path.name}"
    rules = {r["rule"] for r in LABELLED_ROWS}
    assert {"accessory", "bare_die", "for_parts", "laptop", "system", "lot"} <= rules
    assert {"memory_conflict", "word_order", "lhr", "oem_pull", "new_listing"} <= rules
    assert {"installed_block", "dc_module", "ambiguous", "not_in_catalog"} <= rules
    assert {"german", "french", "spanish", "italian", "japanese"} <= rules
    assert {"multi_card", "broken", "spec_words"} <= rules  # issue 26 item 4


@pytest.mark.parametrize("row", LABELLED_ROWS, ids=[r["title"] for r in LABELLED_ROWS])
def test_labelled_title(row):
    match = match_title(row["title"], CATALOG)
    assert match.gpu == (row["expected_gpu"] or None), match.reason
    # every decision keeps its reason; a rejection never reads as a match
    assert match.reason.startswith("matched: ") == (match.gpu is not None)


def test_held_out_titles_meet_the_accuracy_targets():
    held_out = score(read_titles(HOLDOUT))
    assert held_out.right_share >= 0.95, held_out
    assert held_out.accepted_share <= 0.03, held_out
    assert held_out.wrong == 0, held_out


def test_memory_that_contradicts_the_model_is_rejected_with_both_sizes():
    match = match_title("RTX 3090 12GB Gaming", CATALOG)
    assert match.gpu is None
    assert match.reason == "memory_conflict: GeForce RTX 3090 has 24 GB, not 12 GB"


def test_ambiguous_names_name_every_candidate():
    reason = match_title("NVIDIA A100 40GB", CATALOG).reason
    assert reason == "ambiguous: a100 could be A100 PCIe 40 GB / A100 SXM4 40 GB"
