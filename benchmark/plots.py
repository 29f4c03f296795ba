"""PNG plots for the suites (matplotlib, no display needed)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt


def grouped_bars(path: Path, title: str, groups: Sequence[str], series: dict[str, Sequence[float]], ylabel: str,
                 reference: tuple[str, float] | None = None) -> Path:
    """Bars per group, one colour per series; an optional horizontal reference line."""
    fig, ax = plt.subplots(figsize=(max(6.0, 0.9 * len(groups) * max(1, len(series)) / 2 + 3), 4.2))
    width = 0.8 / max(1, len(series))
    for i, (label, values) in enumerate(series.items()):
        xs = [g + (i - (len(series) - 1) / 2) * width for g in range(len(groups))]
        bars = ax.bar(xs, values, width, label=label)
        ax.bar_label(bars, fmt=lambda v: f"{v:,.0f}" if abs(v) >= 10 else f"{v:.3f}", fontsize=7, padding=1)
    if reference is not None:
        ax.axhline(reference[1], color="grey", linestyle="--", linewidth=1)
        ax.text(len(groups) - 0.5, reference[1], f" {reference[0]}", va="bottom", ha="right", fontsize=8,
                color="grey")
    ax.set_xticks(range(len(groups)), groups)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.set_ylim(top=ax.get_ylim()[1] * 1.18)
    ax.legend(fontsize=8, loc="upper center", ncols=min(4, len(series)), frameon=False)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def loglog(path: Path, title: str, xs: Sequence[float], series: dict[str, Sequence[float]], xlabel: str,
           ylabel: str) -> Path:
    """Lines on log-log axes: how each figure grows with the store."""
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    for label, ys in series.items():
        ax.plot(xs, ys, marker="o", label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
