"""An experiment's numbers as people read them: mean ± standard deviation over seeds, in a Markdown
table and a PNG.

``values[condition][metric]`` is the list of one number per seed. The spread is the sample
standard deviation (ddof = 1) across seeds: with 3 seeds it is a rough guide, so the table also
says how many seeds each cell has, and the plot shows every seed as a dot beside the mean.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np


def mean_sd(xs) -> tuple[float, float]:
    """Mean and sample standard deviation of the finite values (NaN, NaN if there are none)."""
    xs = np.asarray([x for x in xs if x is not None and math.isfinite(x)], dtype=float)
    if xs.size == 0:
        return float("nan"), float("nan")
    return float(xs.mean()), float(xs.std(ddof=1)) if xs.size > 1 else 0.0


def cell(xs, percent: bool) -> str:
    m, s = mean_sd(xs)
    if math.isnan(m):
        return "–"
    if percent:
        return f"{100 * m:.1f} ± {100 * s:.1f}"
    finite = [x for x in xs if x is not None and math.isfinite(x)]
    if all(float(x).is_integer() for x in finite) and abs(m) >= 100:  # counts (parameters, tokens)
        return f"{m:,.0f}" if s == 0 else f"{m:,.0f} ± {s:,.0f}"
    return f"{m:.3f} ± {s:.3f}"


def markdown_table(plan, values: dict) -> str:
    """One row per condition, one column per metric: ``mean ± sd`` (percentages for rates)."""
    headers = ["condition"] + [m.label + (" (%)" if m.percent else "") for m in plan.metrics]
    rows = [[c] + [cell(values.get(c, {}).get(m.key, []), m.percent) for m in plan.metrics]
            for c in plan.conditions]
    widths = [max(len(r[i]) for r in [headers] + rows) for i in range(len(headers))]

    def line(r):
        return "| " + " | ".join(x.ljust(w) for x, w in zip(r, widths)) + " |"
    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(headers), sep] + [line(r) for r in rows])


def markdown_report(name: str, plan, values: dict, seeds, command: str, seconds: float,
                    cpu_seconds: float | None = None) -> str:
    """The table with its caption: the question, the command that made it, seeds, time and settings.
    CPU time (all threads, all runs) is the cost that does not depend on how busy the machine was."""
    settings = ", ".join(f"{k}={v}" for k, v in plan.settings.items())
    from minilm.experiments import claims
    lines = [f"### {name}: {plan.title}", "",
             f"`{command}` — mean ± standard deviation over {len(seeds)} seeds ({', '.join(map(str, seeds))}); "
             f"{seconds / 60:.1f} min wall-clock" + (f", {cpu_seconds / 60:.1f} min of CPU" if cpu_seconds else "")
             + ".", "", markdown_table(plan, values), ""]
    lines += claims.markdown(claims.verdict(plan.claims, values, plan.settings.get("corpus")))
    if plan.notes:
        lines += list(plan.notes) + [""]
    lines.append(f"Settings: {settings}.")
    return "\n".join(lines) + "\n"


def figure(name: str, plan, values: dict, path) -> Path:
    """Bars (or a line over ``plan.x``) of the first one or two metrics: mean ± sd, every seed a dot."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    shown = plan.metrics[:2]
    fig, axes = plt.subplots(1, len(shown), figsize=(5.6 * len(shown), 4.2), squeeze=False)
    for ax, metric in zip(axes[0], shown):
        scale = 100.0 if metric.percent else 1.0
        per = [[v * scale for v in values.get(c, {}).get(metric.key, []) if v is not None and math.isfinite(v)]
               for c in plan.conditions]
        stats = [mean_sd(v) for v in per]
        means = np.array([m for m, _ in stats])
        sds = np.array([s for _, s in stats])
        if plan.x:
            xs = np.array([plan.x.get(c, np.nan) for c in plan.conditions], dtype=float)
            lines = {}  # line name -> indices of its conditions, in the plan's order
            for i, c in enumerate(plan.conditions):
                if c not in plan.x:   # a reference row (no x): a dashed level across the plot
                    if per[i]:
                        ax.axhline(means[i], color="grey", linestyle="--", label=f"{c}: {means[i]:.3g}")
                    continue
                lines.setdefault((plan.series or {}).get(c, "mean ± sd"), []).append(i)
            xs_known = xs[~np.isnan(xs)]
            for colour, (label, idx) in enumerate(lines.items()):
                ax.errorbar(xs[idx], means[idx], yerr=sds[idx], marker="o", capsize=4, color=f"C{colour}",
                            label=label)
                for i in idx:
                    ax.scatter([xs[i]] * len(per[i]), per[i], color=f"C{colour}", alpha=0.35, s=14)
            ax.set_xlabel(plan.xlabel)
            if np.all(xs_known > 0) and xs_known.max() / xs_known.min() >= 8:
                ax.set_xscale("log", base=2)
            if plan.series or len(xs_known) < len(xs):
                ax.legend(fontsize=8)
            if not plan.series:
                ax.set_xticks(xs_known, [f"{x:g}" for x in xs_known])
        else:
            pos = np.arange(len(plan.conditions))
            ax.bar(pos, means, yerr=sds, capsize=4, color=[f"C{i % 10}" for i in pos], alpha=0.75)
            for p, v in zip(pos, per):
                ax.scatter(np.full(len(v), p) + np.linspace(-0.12, 0.12, max(len(v), 1))[:len(v)], v,
                           color="black", s=12, zorder=3)
            ax.set_xticks(pos, plan.conditions, rotation=25, ha="right")
            finite = [x for v in per for x in v]
            if finite:
                lo, hi = min(finite), max(finite)
                pad = 0.15 * max(hi - lo, 1e-9 + (2.0 if metric.percent else 0.05))
                ax.set_ylim(max(lo - pad, 0.0) if lo >= 0 else lo - pad, hi + pad)
        ax.set_ylabel(metric.label + (" (%)" if metric.percent else ""))
        ax.grid(axis="y", alpha=0.3)
    n = max((len(values.get(c, {}).get(plan.metrics[0].key, [])) for c in plan.conditions), default=0)
    fig.suptitle(f"{name}: {plan.title}\n(mean ± sd over {n} seeds; dots are single seeds)", fontsize=10)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return path
