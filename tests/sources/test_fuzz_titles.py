"""Seeded fuzzing of the title matcher (issue 26 items 4 and 7): one working card or nothing.

Seeds are the titles of tests/fixtures/titles_*.csv that sell one catalog card. Mutations
add, in the six languages of the tuning set, a phrase that makes the listing several cards
(`multi_card`) or a card that does not work (`broken`), at the start, at the end, after a
dash or a comma, or in parentheses: every mutant must be rejected with a reason, never
matched (0 silent acceptances). The `spec_words` kind adds words those rules must not catch
("Dual Fan", "2-slot", "Dual BIOS", "no repair needed", "故障なし"): the mutant must still be
the same card, never another one (0 wrong). `parts_condition` feeds the condition strings
marketplaces print for parts-only listings to `normalize_condition`. A bare damage adjective
("dañada") after a box word means the box ("Original Box dañada"), so the table names the card
with it ("tarjeta dañada").

Counts per kind are printed (`pytest -s`) and are in docs/reliability.md.
"""

import os
import random
from collections import Counter

from sources.bundled import bundled_catalog
from sources.catalog import match_title, normalize_condition
from tests.sources.retail.test_title_accuracy import HOLDOUT, LABELLED, read_titles

SEED = int(os.environ.get("GPUVALUE_FUZZ_SEED", "20261123"))
CASES_PER_KIND = 400
CATALOG = bundled_catalog()

MULTI_CARD = (
    # en
    "2-Pack", "2 pack", "Twin Pack", "Pack of 2", "two cards", "2 cards", "Price is for both",
    "price for both", "sold together", "matched pair", "3-way SLI", "Lot of 2", "x2", "(x2)",
    "Qty 2", "2 GPUs", "Set of 2", "Bundle", "both cards included", "TWO CARDS",
    # de
    "2 Stück", "Doppelpack", "2er Set", "zwei Karten", "2 Grafikkarten", "Preis für beide",
    "im Paar", "Konvolut",
    # fr
    "lot de 2", "deux cartes", "2 cartes graphiques", "prix pour les deux", "paire", "pack de 2",
    # es
    "lote de 2", "dos tarjetas", "2 tarjetas gráficas", "precio por las dos", "ambas",
    # it
    "lotto di 2", "due schede", "2 schede video", "prezzo per entrambe", "coppia",
    # ja
    "2枚セット", "2台セット", "2個セット", "まとめ売り", "セット売り",
)  # fmt: skip
BROKEN = (
    # en
    "not working", "NOT WORKING", "does not work", "Doesn't Work", "no post", "NO POST",
    "won't boot", "no display", "needs repair", "for repair", "water damaged", "water damage",
    "PCB damaged", "cracked PCB", "corrupted BIOS", "bad BIOS chip", "dead", "DEAD",
    "for parts", "Parts only", "for spares", "artifacting", "code 43", "black screen",
    "faulty", "broken", "defective", "untested", "as is", "stopped working",
    # de
    "defekt", "kaputt", "funktioniert nicht", "startet nicht", "Wasserschaden", "für Bastler",
    "reparaturbedürftig", "als Ersatzteil",
    # fr
    "HS", "en panne", "ne fonctionne pas", "ne s'allume pas", "à réparer", "pour pièces",
    "défectueuse", "carte cassée",
    # es
    "no funciona", "averiada", "no enciende", "para reparar", "para piezas", "tarjeta dañada",
    "tarjeta rota",
    "defectuosa",
    # it
    "non funziona", "guasta", "da riparare", "per ricambi", "non funzionante",
    "scheda danneggiata", "scheda rotta", "difettosa",
    # ja
    "ジャンク", "故障", "動作不良", "映らない", "水没", "破損", "部品取り", "動作未確認",
)  # fmt: skip
SPEC_WORDS = (
    "Dual Fan", "2-slot", "2.5-slot", "Dual BIOS", "PCB 12-layer",
    "(works perfectly, no repair needed)", "never water damaged", "no artifacts",
    "tested working", "2x HDMI", "1x HDMI, 3x DP", "Triple Fan", "fully working, no issues",
    "kein Defekt", "funktioniert einwandfrei", "OVP beschädigt", "aucun défaut",
    "boîte endommagée", "caja dañada", "funciona perfectamente", "scatola danneggiata",
    "perfettamente funzionante", "故障なし", "動作確認済み", "美品",
)  # fmt: skip
# Condition strings marketplaces print for parts-only listings, six languages.
PARTS_CONDITIONS = (
    "For parts or not working", "Parts only", "For Parts Only", "Spares or repair",
    "Als Ersatzteil / defekt", "Defekt", "Pour pièces détachées / ne fonctionne pas",
    "Para desguace o no funciona", "Para piezas o no funciona",
    "Solo per parti di ricambio o non funzionante", "ジャンク品", "部品取り",
)  # fmt: skip
POSITIONS = ("{t} {p}", "{p} {t}", "{t} - {p}", "{t}, {p}", "{t} ({p})")


def _card_titles() -> list[tuple[str, str]]:
    rows = read_titles(LABELLED) + read_titles(HOLDOUT)
    return [(r["title"], r["expected_gpu"]) for r in rows if r["expected_gpu"]]


def test_lots_and_broken_cards_are_never_one_working_card():
    rng = random.Random(SEED)
    titles = _card_titles()
    counts: Counter[str] = Counter()
    failures = []
    for kind, phrases in (("multi_card", MULTI_CARD), ("broken", BROKEN)):
        for number in range(CASES_PER_KIND):
            title, _ = rng.choice(titles)
            mutant = rng.choice(POSITIONS).format(t=title, p=rng.choice(phrases))
            match = match_title(mutant, CATALOG)
            counts[kind] += 1
            if match.gpu is not None or ":" not in match.reason:
                failures.append(f"{kind} case {number}: {mutant!r} -> {match}")
    for number in range(CASES_PER_KIND):
        title, gpu = rng.choice(titles)
        mutant = rng.choice(POSITIONS).format(t=title, p=rng.choice(SPEC_WORDS))
        match = match_title(mutant, CATALOG)
        counts["spec_words"] += 1
        if match.gpu != gpu:
            failures.append(f"spec_words case {number}: {mutant!r} -> {match}, not {gpu}")
    for condition in PARTS_CONDITIONS:
        counts["parts_condition"] += 1
        if normalize_condition(condition) != "for_parts":
            failures.append(f"parts_condition {condition!r} -> {normalize_condition(condition)}")
    print(f"title matcher: {sum(counts.values())} cases from {len(titles)} card titles")
    for kind in sorted(counts):
        print(f"  {kind}: {counts[kind]} cases")
    assert not failures, f"{len(failures)} broken cases:\n" + "\n".join(failures[:30])
