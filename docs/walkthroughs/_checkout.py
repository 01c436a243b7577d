"""Lets a walkthrough run from a checkout without ``pip install -e .``: puts the folder that holds
``minilm/`` (the repository root) at the front of ``sys.path``.

Each walkthrough starts with ``import _checkout``. Python puts a script's own folder on the path, so
this file is found when a script runs as ``python docs/walkthroughs/02_bert.py`` from the root, as
``python 02_bert.py`` from this folder, or as a notebook opened here (the kernel starts in this folder).
"""
import sys
from pathlib import Path

for _folder in [Path.cwd(), *Path.cwd().parents, *Path(__file__).resolve().parents]:
    if (_folder / "minilm" / "__init__.py").exists():
        sys.path.insert(0, str(_folder))
        break
