"""Figures, one module per family; `draw(kind, df, out_path, ...)` dispatches by the config's plot.kind."""

from __future__ import annotations

from pathlib import Path

import pandas as pd


def draw(kind: str, df: pd.DataFrame, out_path: str | Path, metric: str | None = None, title: str = "") -> Path:
    if kind == "privacy_curve":
        from dpbench.plots.privacy_curve import plot_privacy_curve

        return plot_privacy_curve(df, out_path, metric=metric, title=title)
    raise ValueError(f"unknown plot kind {kind!r}; known: privacy_curve")
