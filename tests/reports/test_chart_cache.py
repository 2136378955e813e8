"""The SVG cache: a chart whose spec did not change is not rendered again, and the cache
keeps only what the last build used."""

import altair as alt
import polars as pl

from reports.charts import SvgCache, render_chart


def chart(height: float) -> alt.Chart:
    data = pl.DataFrame({"x": ["a", "b"], "y": [1.0, height]})
    return alt.Chart(data).mark_bar().encode(x="x:N", y="y:Q")


def test_an_unchanged_spec_is_served_from_the_cache_and_unused_entries_go(tmp_path):
    folder = tmp_path / "cache"
    first = SvgCache(folder)
    (tmp_path / "one").mkdir()
    render_chart(chart(2.0), tmp_path / "one", "a", cache=first)
    render_chart(chart(3.0), tmp_path / "one", "b", cache=first)
    first.prune()
    assert first.hits == 0 and len(list(folder.iterdir())) == 2

    second = SvgCache(folder)
    (tmp_path / "two").mkdir()
    render_chart(chart(2.0), tmp_path / "two", "a", cache=second)  # unchanged: from the cache
    render_chart(chart(4.0), tmp_path / "two", "b", cache=second)  # changed: rendered
    (folder / ".leftover.1.2.tmp").write_text("half", encoding="utf-8")  # a killed build's
    second.prune()
    assert second.hits == 1
    assert (tmp_path / "two" / "a.svg").read_bytes() == (tmp_path / "one" / "a.svg").read_bytes()
    assert (tmp_path / "two" / "b.svg").read_bytes() != (tmp_path / "one" / "b.svg").read_bytes()
    assert "<svg" in (tmp_path / "two" / "b.svg").read_text(encoding="utf-8")
    # Only this build's two entries remain: the replaced chart's and the leftover are gone.
    assert sorted(p.name for p in folder.iterdir()) == sorted(second.used)
    assert len(second.used) == 2


def test_without_a_folder_every_chart_is_rendered(tmp_path):
    cache = SvgCache(None)
    render_chart(chart(2.0), tmp_path, "a", cache=cache)
    render_chart(chart(2.0), tmp_path, "b", cache=cache)
    cache.prune()
    assert (
        cache.hits == 0 and (tmp_path / "a.svg").read_bytes() == (tmp_path / "b.svg").read_bytes()
    )
