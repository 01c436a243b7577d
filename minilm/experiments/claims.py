"""Does the miniature agree with the paper? Each experiment states the paper's findings as claims
about the direction of its own table, and the runner checks them against the seeds' means.

A claim is an ordering, not a number: the miniature cannot reproduce GLUE scores, but it can say
whether ELECTRA's features beat BERT's. Two kinds:

    Beats(paper, metric, above, below)   every condition in ``above`` is better (on the metric's
                                         better side) than every condition in ``below``
    BestOf(paper, metric, winners, among)  the best of ``among`` is one of ``winners``

``check(values)`` gives ``(holds, measured)``: whether the ordering holds for the means over seeds,
and the numbers that decided it, with the margin set against the seeds' spread (the largest
standard deviation of the conditions compared). A claim that holds by less than that spread holds
in direction only, and the line says so.

The page's line (:func:`verdict`): **yes** when every claim holds, **in part** when the first (the
paper's main finding) holds and a later one does not, **no** when the main finding does not hold.
A claim may carry ``why_not``: what was measured about the gap when it does not hold; without one,
the page says that no reason has been measured. A reason holds for the text it was measured on: a
``--corpus real`` page shows ``why_not_real`` (measured on the shipped English text) and any other
text's page says that nothing was measured on it.
"""
from __future__ import annotations

from dataclasses import dataclass

from minilm.experiments.report import mean_sd


@dataclass
class Claim:
    paper: str                      # the finding in words, with its source: "(Clark et al. 2020, Table 5)"
    metric: str                     # the run_one key it is read on
    higher_is_better: bool = True
    percent: bool = True            # how the numbers are shown: points (values in [0, 1]) or plain
    why_not: str = ""               # shown when it does not hold: what was measured about the gap
    why_not_real: str = ""          # the same, measured on the shipped English text (``--corpus real``)

    def conditions(self) -> set:
        """The table rows the claim reads."""
        return {c for name in ("above", "below", "winners", "among") for c in getattr(self, name, ())}

    def _means(self, values: dict, conditions) -> dict:
        out = {}
        for c in conditions:
            xs = values.get(c, {}).get(self.metric, [])
            if not xs:
                raise KeyError(f"claim {self.paper!r}: no {self.metric!r} values for condition {c!r}")
            out[c] = mean_sd(xs)
        return out

    def _show(self, x: float) -> str:
        return f"{100 * x:.1f}" if self.percent else f"{x:.3f}"

    def _better(self, a: float, b: float) -> bool:
        return a > b if self.higher_is_better else a < b

    def _margin_line(self, margin: float, stats: dict, of: str = "") -> str:
        """``by <margin>[ of]``, set against the largest standard deviation of the rows compared."""
        spread = max(s for _, s in stats.values())
        unit = " points" if self.percent else ""
        size = (f"{100 * margin:.1f}{unit}" if self.percent else f"{margin:.3f}") + (f" {of}" if of else "")
        if margin <= spread:
            return f"by {size}, less than the seeds' spread ({self._show(spread)}): in direction only"
        return f"by {size}, more than the seeds' spread ({self._show(spread)})"


@dataclass
class Beats(Claim):
    above: tuple = ()
    below: tuple = ()

    def check(self, values: dict) -> tuple[bool, str]:
        stats = self._means(values, tuple(self.above) + tuple(self.below))
        worst_above = (min if self.higher_is_better else max)(self.above, key=lambda c: stats[c][0])
        best_below = (max if self.higher_is_better else min)(self.below, key=lambda c: stats[c][0])
        a, b = stats[worst_above][0], stats[best_below][0]
        holds = self._better(a, b)

        def group(names):
            shown = "; ".join(f"{c} {self._show(stats[c][0])}" for c in names)
            return f"[{shown}]" if len(names) > 1 else shown
        if holds:
            closest = "between the closest pair" if len(self.above) + len(self.below) > 2 else ""
            return True, (f"{group(self.above)} {'>' if a > b else '<'} {group(self.below)}; "
                          + self._margin_line(abs(a - b), stats, closest))
        if len(self.above) + len(self.below) == 2:
            return False, f"{group(self.above)}, not better than {group(self.below)}"
        return False, (f"{group(self.above)} vs {group(self.below)}: {worst_above} "
                       f"{self._show(a)} is not better than {best_below} {self._show(b)}")


@dataclass
class BestOf(Claim):
    winners: tuple = ()
    among: tuple = ()

    def check(self, values: dict) -> tuple[bool, str]:
        stats = self._means(values, self.among)
        pick = max if self.higher_is_better else min
        best = pick(self.among, key=lambda c: stats[c][0])
        holds = best in self.winners
        shown = ", ".join(f"{c} {self._show(stats[c][0])}" for c in self.among)
        if not holds:
            return False, f"the best is {best} ({shown})"
        rest = [c for c in self.among if c not in self.winners]
        runner_up = pick(rest, key=lambda c: stats[c][0]) if rest else best
        margin = abs(stats[best][0] - stats[runner_up][0])
        return True, f"the best is {best} ({shown}); " + self._margin_line(margin, stats, "over the next best")


def applicable(claims: list, conditions) -> list:
    """The claims whose rows are all in ``conditions``: for plans whose rows depend on the settings
    (a --quick teacher too shallow for a 2-layer student, new-york without BERT)."""
    return [c for c in claims if c.conditions() <= set(conditions)]


OTHER_TEXT = ("not measured on this text: the reasons on the synthetic corpus's page were measured there and "
              "need not hold here")


def _reason(claim: Claim, corpus: str | None) -> str:
    """The reason measured on the run's text, or :data:`OTHER_TEXT` when none was."""
    if corpus is None:
        return claim.why_not
    return (corpus == "real" and claim.why_not_real) or OTHER_TEXT


def verdict(claims: list, values: dict, corpus: str | None = None) -> dict:
    """{"verdict": "yes" | "in part" | "no", "claims": [{paper, holds, measured, why_not}]}.

    ``corpus``: the run's ``--corpus`` (None: the synthetic one). A claim's ``why_not`` was measured
    on the synthetic corpus and its ``why_not_real`` on the shipped text ("real"); a run on any other
    text, or on the shipped one without a reason measured there, shows :data:`OTHER_TEXT` instead."""
    checked = []
    for claim in claims:
        try:
            holds, measured = claim.check(values)
        except KeyError as e:  # a run stopped before every condition had a value (tests check the names)
            holds, measured = False, f"not measured in this run ({e.args[0]})"
        checked.append({"paper": claim.paper, "holds": bool(holds), "measured": measured,
                        "why_not": "" if holds else _reason(claim, corpus)})
    if not checked:
        return {"verdict": "", "claims": []}
    if all(c["holds"] for c in checked):
        word = "yes"
    elif checked[0]["holds"]:
        word = "in part"
    else:
        word = "no"
    return {"verdict": word, "claims": checked}


def markdown(result: dict) -> list[str]:
    """The page's lines: the verdict, then one bullet per claim."""
    if not result["claims"]:
        return []
    n = len(result["claims"])
    held = sum(c["holds"] for c in result["claims"])
    lines = [f"**Agrees with the paper?** {result['verdict']} ({held} of {n} of the paper's findings hold "
             "here, read on the means over seeds):", ""]
    for c in result["claims"]:
        line = f"- {'yes' if c['holds'] else 'no'}: {c['paper']} Here: {c['measured']}."
        if not c["holds"]:
            line += " Why: " + (c["why_not"] or "not measured yet.")
        lines.append(line)
    return lines + [""]
