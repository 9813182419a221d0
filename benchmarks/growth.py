"""How a cost grows with size: cost = a * size^b fitted on log-log, the table and the plot
benchmarks/scaling.py prints and draws.
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

#: a fitted exponent above this is called superlinear in the printout
SUPERLINEAR = 1.15


def fit(sizes: list[int], seconds: list[float]) -> tuple[float | None, float | None]:
    """b and a of seconds = a * size^b, least squares on log-log; None with < 2 points."""
    import numpy as np

    pairs = [(s, t) for s, t in zip(sizes, seconds, strict=True) if t > 0]
    if len(pairs) < 2:
        return None, None
    x = np.log([p[0] for p in pairs])
    y = np.log([p[1] for p in pairs])
    b, log_a = np.polyfit(x, y, 1)
    return float(b), float(np.exp(log_a))


def summarize(sizes: list[int], rounds: list[dict[int, dict[str, float]]],
              stages: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for stage in stages:
        if not all(stage in r[s] for r in rounds for s in sizes):
            continue
        med = [statistics.median(r[s][stage] for r in rounds) for s in sizes]
        b, a = fit(sizes, med)
        last, _ = fit(sizes[-2:], med[-2:])
        out[stage] = {"seconds": med, "exponent": b, "a": a, "last_step_exponent": last,
                      "superlinear": b is not None and b > SUPERLINEAR}
    return out


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def table(title: str, unit: str, sizes: list[int], stages: dict[str, Any]) -> str:
    head = (f"{'stage':<28}" + "".join(f"{unit}={s:<10,}" for s in sizes)
            + "  b (fit)  b (last step)")
    lines = [title, head, "-" * len(head)]
    for stage, row in stages.items():
        b = row["exponent"]
        flag = "  superlinear" if row["superlinear"] else ""
        cells = "".join(f"{t:<{len(unit) + 11}.4g}" for t in row["seconds"])
        last = row["last_step_exponent"]
        lines.append(f"{stage:<28}{cells}  {_num(b):<9}{_num(last):<14}{flag}".rstrip())
    return "\n".join(lines)


def plot(path: Path, result: dict[str, Any]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sweeps = [(result["over_files"], "files in the tree (N)",
               f"over N, Q = {result['over_files']['queries']}"),
              (result["over_queries"], "queries in the set (Q)",
               f"over Q, N = {result['over_queries']['files']:,}")]
    fig, axes = plt.subplots(1, 2, figsize=(13, 5.5))
    for ax, (sweep, xlabel, title) in zip(axes, sweeps, strict=True):
        sizes = sweep["sizes"]
        for stage, row in sweep["stages"].items():
            b = row["exponent"]
            label = f"{stage} (b = {b:.2f})" if b is not None else stage
            ax.plot(sizes, row["seconds"], marker="o", label=label,
                    linestyle="--" if stage in ("bare client", "harness added") else "-")
        if sizes:
            ref = [sizes[0], sizes[-1]]
            ax.plot(ref, [1e-3 * s / sizes[0] for s in ref], color="grey", linewidth=0.8,
                    linestyle=":", label="slope 1 (linear)")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(xlabel)
        ax.set_ylabel("seconds (median)")
        ax.set_title(title)
        ax.grid(True, which="both", linewidth=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(f"codesearch-bench harness cost, cost = a * size^b "
                 f"({result['machine']['cpus']} cpus, {result['date']})")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
