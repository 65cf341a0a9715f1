"""The audit figure drawn from a small hand-built audit table: its panels, points, violation rings, reference
lines and legend say what the table says."""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import PathCollection

from dpbench.audit import epsilon_lower_bound, mu_lower_bound
from dpbench.plots.audit import plot_audit

DELTA = 1e-6


def audit_table(gdp: bool = True) -> pd.DataFrame:
    """2 algorithms (one GDP: it has mu) x 2 designs x 2 budgets; one violation, some bounds of 0."""
    rows = []
    for algorithm, mu_of in [("alg_gdp", (lambda eps: eps / 2) if gdp else None), ("alg_pure", None)]:
        for design in ("clip_pull", "tiny_n"):
            for eps in (0.5, 2.0):
                lb = 0.0 if design == "tiny_n" else eps / 4
                violation = algorithm == "alg_pure" and design == "clip_pull" and eps == 2.0
                mu = mu_of(eps) if mu_of else np.nan
                rows.append({"algorithm": algorithm, "design": design, "epsilon": eps, "delta": DELTA,
                             "eps_lb": 3.0 if violation else lb, "mu": mu, "mu_lb": mu / 3 if mu_of else np.nan,
                             "runs": 400, "verdict": "violation" if violation else "ok"})
    return pd.DataFrame(rows)


@pytest.fixture
def drawn(monkeypatch, tmp_path):
    """plot_audit's figure, kept open (plt.close is intercepted) for inspection."""
    figures = []
    monkeypatch.setattr(plt, "close", figures.append)

    def draw(table):
        path = plot_audit(table, tmp_path / "sub" / "audit.png", title="my audit")
        assert path == tmp_path / "sub" / "audit.png" and path.read_bytes()[:4] == b"\x89PNG"
        return figures[-1]

    yield draw
    monkeypatch.undo()
    for fig in figures:
        plt.close(fig)


def scatters(ax) -> list:
    """The collections of the scatter calls, in drawing order (one point each)."""
    cols = [c for c in ax.collections if isinstance(c, PathCollection)]
    assert all(len(c.get_offsets()) == 1 for c in cols)
    return cols


def ax_budgets(ax) -> list[str]:
    return list(tick_labels(ax.child_axes[0]).values())


def tick_labels(ax) -> dict[float, str]:
    return {t.get_position()[0]: t.get_text() for t in ax.get_xticklabels()}


def nearest(labels: dict[float, str], x: float) -> str:
    return labels[min(labels, key=lambda t: abs(t - x))]


def test_epsilon_and_mu_panels(drawn):
    table = audit_table()
    fig = drawn(table)
    axes = [ax for ax in fig.axes if ax.get_xlabel()]  # the panels, not their top axes
    assert len(axes) == 2 and fig._suptitle.get_text() == "my audit"
    assert all(ax.get_xlabel().startswith("algorithm") and ax.get_yscale() == "symlog" for ax in axes)
    for ax, x, y, sym, df in [(axes[0], "epsilon", "eps_lb", "$\\varepsilon$", table),
                              (axes[1], "mu", "mu_lb", "$\\mu$", table[table["mu"].notna()])]:
        budgets = sorted(df[x].unique())
        top = tick_labels(ax.child_axes[0])  # a column per budget asked, named on top
        assert list(top.values()) == [f"{sym} asked = {b:.3g}" for b in budgets]
        slots = tick_labels(ax)  # in each column a slot per algorithm, named below
        assert list(slots.values()) == sorted(df["algorithm"].unique()) * len(budgets)
        cols = scatters(ax)
        rings = [c for c in cols if len(c.get_facecolors()) == 0]  # the red rings are unfilled
        violations = df[df["verdict"] == "violation"]
        assert len(cols) == len(df) + len(violations) and len(rings) == len(violations)
        markers = np.array([c.get_offsets()[0] for c in cols if c not in rings])
        assert len({tuple(m) for m in markers}) == len(df)  # no marker hides another
        for (_, r), (xv, yv) in zip(df.iterrows(), markers, strict=True):  # drawn in the table's order
            # at its bound, in its budget's column and its algorithm's slot: x says nothing else
            assert yv == r[y] and nearest(slots, xv) == r["algorithm"]
            assert nearest(top, xv) == f"{sym} asked = {r[x]:.3g}"
        colour = {}  # one colour per algorithm, different algorithms different colours
        for alg, c in zip(df["algorithm"], (c for c in cols if c not in rings), strict=True):
            colour.setdefault(alg, set()).add(tuple(c.get_facecolors()[0]))
        assert all(len(v) == 1 for v in colour.values()) and len(set.union(*colour.values())) == len(colour)
        for ring in rings:  # around the violating row's marker
            assert any(np.allclose(ring.get_offsets()[0], m) for m in markers)
            assert ring.get_offsets()[0][1] == pytest.approx(violations[y].iloc[0])
        segments, cap = ax.lines[:len(budgets)], ax.lines[len(budgets)]  # then the lines between columns
        for budget, seg in zip(budgets, segments, strict=True):
            assert set(seg.get_ydata()) == {budget}
            inside = markers[(markers[:, 0] >= min(seg.get_xdata())) & (markers[:, 0] <= max(seg.get_xdata()))]
            assert len(inside) == (df[x] == budget).sum()
        half = 200  # of the 400 runs: the bound of perfect separation on the held-out half
        best = epsilon_lower_bound(0, half, half, half, DELTA) if y == "eps_lb" else mu_lower_bound(0, half, half, half)
        assert cap.get_ydata()[0] == pytest.approx(float(best)) and float(best) > 0
        assert "200 + 200 runs" in ax.get_legend().get_texts()[1].get_text()
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert labels == ["alg_gdp", "alg_pure", "clip_pull", "tiny_n", "violation"]


def test_no_mu_panel_without_gdp_rows(drawn):
    fig = drawn(audit_table(gdp=False))
    axes = [ax for ax in fig.axes if ax.get_xlabel()]
    assert len(axes) == 1 and ax_budgets(axes[0]) == ["$\\varepsilon$ asked = 0.5", "$\\varepsilon$ asked = 2"]
    cols = scatters(axes[0])
    assert len(cols) == 8 + 1  # 8 rows, 1 violation ring


def test_every_design_gets_a_marker(tmp_path):
    """More designs than markers (the full audit's table) must still draw: markers are reused."""
    import numpy as np

    from dpbench.audit import DESIGNS

    rows = [{"algorithm": "ssp", "design": d, "epsilon": 1.0, "delta": 1e-6, "eps_lb": 0.0, "mu": np.nan,
             "mu_lb": np.nan, "runs": 500, "failures": 0, "verdict": "ok"} for d in DESIGNS]
    assert len(rows) > 12 and plot_audit(pd.DataFrame(rows), tmp_path / "a.png").exists()
