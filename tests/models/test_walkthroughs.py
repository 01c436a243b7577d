"""The runnable walkthroughs in docs/walkthroughs/: one jupytext "percent" script per family.

Fast checks (every run): each script is in percent format (it opens with a markdown cell and has at
least three code cells), parses, links to task notes that exist, and is listed in the folder's
README.md. Slow check (``-m slow``, run by .ci/run): each script runs to the end as
``python docs/walkthroughs/NN_family.py`` from the repository root, with no display and no network,
and leaves no file behind in the repository.
"""
from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "docs" / "walkthroughs"
SCRIPTS = sorted(FOLDER.glob("[0-9][0-9]_*.py"))
LINK = re.compile(r"\]\(([^)\s]+\.md)\)")


def cells(text: str) -> list[tuple[str, str]]:
    """(kind, body) of each cell: kind is "markdown" or "code"; a jupytext YAML header is skipped."""
    lines = text.splitlines()
    if lines and lines[0].strip() == "# ---":                 # optional jupytext header
        end = next(i for i, line in enumerate(lines[1:], 1) if line.strip() == "# ---")
        lines = lines[end + 1:]
    out, kind, body = [], None, []
    for line in lines:
        if line.startswith("# %%"):
            if kind is not None:
                out.append((kind, "\n".join(body)))
            kind, body = ("markdown" if "[markdown]" in line else "code"), []
        elif kind is None and line.strip():
            out.append(("stray", line))                     # text before the first cell marker
        else:
            body.append(line)
    if kind is not None:
        out.append((kind, "\n".join(body)))
    return out


def test_there_is_a_walkthrough_per_family():
    names = {p.stem.split("_", 1)[1] for p in SCRIPTS}
    for family in ("gpt", "bert", "roberta", "electra", "xlnet", "t5", "bart", "distillation", "static_vectors"):
        assert family in names, f"no walkthrough for {family} in {FOLDER}"


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_percent_format(script):
    parsed = cells(script.read_text(encoding="utf-8"))
    kinds = [k for k, _ in parsed]
    assert "stray" not in kinds, f"{script.name}: text before the first '# %%' cell marker"
    assert kinds[0] == "markdown", f"{script.name}: the first cell must be '# %% [markdown]' (the title)"
    assert parsed[0][1].lstrip().startswith("# # "), f"{script.name}: the first markdown cell starts with a title"
    assert kinds.count("code") >= 3, f"{script.name}: {kinds.count('code')} code cells, expected at least 3"
    for kind, body in parsed:
        if kind == "markdown":                               # every markdown line is a comment
            bad = [line for line in body.splitlines() if line.strip() and not line.startswith("#")]
            assert not bad, f"{script.name}: markdown cell with uncommented lines {bad[:2]}"
    ast.parse(script.read_text(encoding="utf-8"), filename=str(script))


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_links_to_task_notes_resolve(script):
    links = LINK.findall(script.read_text(encoding="utf-8"))
    assert any("../tasks/" in link for link in links), f"{script.name}: link the matching docs/tasks note"
    for link in links:
        if "://" not in link:
            assert (script.parent / link).resolve().exists(), f"{script.name}: broken link {link}"


def test_readme_lists_every_walkthrough():
    readme = (FOLDER / "README.md").read_text(encoding="utf-8")
    for script in SCRIPTS:
        assert f"({script.name})" in readme, f"README.md does not link {script.name}"
    for name in re.findall(r"\((\d\d_[a-z_]+\.py)\)", readme):
        assert (FOLDER / name).exists(), f"README.md links {name}, which does not exist"


def _repo_entries() -> set[Path]:
    """Files and folders that a walkthrough could litter: the top level and docs/walkthroughs."""
    entries = set(ROOT.iterdir()) | set(FOLDER.rglob("*"))
    return {p for p in entries if "__pycache__" not in p.parts and p.suffix not in (".nbi", ".nbc")}


@pytest.mark.slow
@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_walkthrough_runs(script):
    before = _repo_entries()
    env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONHASHSEED": "0"}
    env.pop("PYTHONPATH", None)                              # the script finds the checkout itself
    done = subprocess.run([sys.executable, str(script.relative_to(ROOT))], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{script.name} failed:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    assert "walkthrough finished" in done.stdout, f"{script.name} stopped early:\n{done.stdout[-2000:]}"
    assert _repo_entries() <= before, f"{script.name} wrote {sorted(_repo_entries() - before)} into the repository"
