"""The reproduction report (dpbench/reproduction.py) as files: every link and image resolves.  The report of the
smoke sweeps and its claims: tests/test_reproduce.py."""


def test_every_link_and_image_of_the_report_resolves(tmp_path, monkeypatch):
    """report.html from a smoke sweep (and a directory holding only figures): every <img src> and <a href> is a
    file relative to the report's directory or an anchor of the page; each figure links to its full-size file."""
    from html.parser import HTMLParser
    from urllib.parse import unquote

    from dpbench.__main__ import main
    from dpbench.reproduction import write

    monkeypatch.setenv("DPBENCH_OFFLINE", "1")
    assert main(["sweep", "experiment=quickstart", "seeds=[0]", "epsilons=[0.5,1]", f"results_dir={tmp_path}",
                 "runner.progress=false", "runner.backend=sequential", "runner.n_jobs=1"]) == 0
    (tmp_path / "extra_figures").mkdir()
    figure = next((tmp_path / "quickstart").glob("quickstart*.png"))  # a sub-grid: named by its grid
    (tmp_path / "extra_figures" / "fig 10.png").write_bytes(figure.read_bytes())
    html_path, md_path, _ = write(tmp_path)

    class Links(HTMLParser):
        def __init__(self):
            super().__init__()
            self.refs, self.ids, self.open_a = [], set(), None

        def handle_starttag(self, tag, attrs):
            a = dict(attrs)
            self.ids.add(a.get("id"))
            if tag == "a":
                self.open_a = a.get("href")
            if tag in ("a", "img") and (a.get("href") or a.get("src")):
                self.refs.append((tag, a.get("href") or a.get("src"), self.open_a if tag == "img" else None))

        def handle_endtag(self, tag):
            if tag == "a":
                self.open_a = None

    links = Links()
    links.feed(html_path.read_text())
    images = [(src, link) for tag, src, link in links.refs if tag == "img"]
    shown = f"quickstart/{figure.name}"
    assert {unquote(src) for src, _ in images} == {shown, "extra_figures/fig 10.png"}
    assert all(link == src for src, link in images)  # each image is a link to its full-size file
    external = [r for _, r, _ in links.refs if r.startswith(("http://", "https://", "mailto:"))]
    assert external == []  # none today; a future one is excluded here, explicitly
    for _, ref, _ in links.refs:
        if ref.startswith("#"):
            assert ref[1:] in links.ids, ref
        else:
            assert (html_path.parent / unquote(ref)).is_file(), ref
    assert f"[![quickstart]({shown})]({shown})" in md_path.read_text()


def test_rows_made_by_uncommitted_code_are_named_whatever_the_columns_dtype(tmp_path):
    """git_dirty is bool in one part and missing in another (rows from before the column): concatenated it is
    object or float; the report counts the dirty rows either way (fillna(False) on floats is a pandas error
    to come)."""
    import warnings

    import pandas as pd

    from dpbench.reproduction import _facts

    for dirty in (pd.Series([True, None, False], dtype=object), pd.Series([1.0, float("nan"), 0.0])):
        df = pd.DataFrame({"git_dirty": dirty, "git_diff_hash": ["abc", None, None]})
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            facts, _ = _facts(df, tmp_path)
        assert facts["uncommitted code"].startswith("1 of 3 rows") and "diff abc" in facts["uncommitted code"]
    facts, _ = _facts(pd.DataFrame({"git_dirty": [False, False]}), tmp_path)
    assert "uncommitted code" not in facts
