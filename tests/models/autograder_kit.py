"""The autograder's templates (tools/autograder/, tools/make_autograder.py) as modules, and what the
instructor's grading tests share: planted answers (:func:`fill_reference`) and the rows of a Markdown
grade table (:func:`table_rows`). Each template is loaded once, whichever test file asks first.
"""
from __future__ import annotations

import importlib.util
import re
import shutil
import sys
from pathlib import Path

from tests.release_kit import ROOT

TEMPLATES = ROOT / "tools" / "autograder"


def load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


sys.path.insert(0, str(TEMPLATES))
intake = load("intake", TEMPLATES / "intake.py")
driver = load("minilm_autograder_driver", TEMPLATES / "autograder.py")
classroom = load("minilm_classroom", TEMPLATES / "classroom.py")
bundle = load("make_autograder", ROOT / "tools" / "make_autograder.py")
sys.path.remove(str(TEMPLATES))


def fill_reference(ex_dir: Path, modules=None) -> None:
    """Write the reference bodies of the chosen modules' task files into ``ex_dir`` (a planted answer)."""
    for pkg in sorted((ROOT / "solutions").glob("task[0-9][0-9]_*")):
        if modules is not None and int(pkg.name[4:6]) not in modules:
            continue
        (ex_dir / pkg.name).mkdir(parents=True, exist_ok=True)
        for f in pkg.glob("*.py"):
            if f.name != "__init__.py":
                shutil.copyfile(f, ex_dir / pkg.name / f.name)


def table_rows(markdown: str) -> list[list[str]]:
    """The body rows of the Markdown table(s), split on the unescaped `|`."""
    rows = [re.split(r"(?<!\\)\|", l)[1:-1] for l in markdown.splitlines() if l.startswith("| ")]
    return [[c.strip() for c in r] for r in rows if r and r[0].strip() not in ("task", "---")]
