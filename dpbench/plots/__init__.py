"""Figures, one module per family; `draw(plot_cfg, df, out_path, title)` dispatches on plot.kind."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pandas as pd

KINDS = ("privacy_curve", "scatter")


def draw(plot: Mapping, df: pd.DataFrame, out_path: str | Path, title: str = "") -> Path:
    kind = plot.get("kind", "privacy_curve")
    if kind == "privacy_curve":
        from dpbench.plots.privacy_curve import plot_privacy_curve

        return plot_privacy_curve(df, out_path, metric=plot.get("metric"), title=title)
    if kind == "scatter":
        from dpbench.plots.scatter import plot_scatter

        if not plot.get("x") or not plot.get("y"):
            raise ValueError("plot.kind=scatter needs plot.x and plot.y (the two algorithms to compare)")
        return plot_scatter(df, out_path, x=plot["x"], y=plot["y"], metric=plot.get("metric") or "test_mse",
                            title=title)
    raise ValueError(f"unknown plot kind {kind!r}; known: {', '.join(KINDS)}")
