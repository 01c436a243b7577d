"""Every ``--help`` of the command line renders as text a person reads.

argparse %-formats each argument's and each sub-command's ``help`` (``%(default)s``), so a bare
``%`` in plain prose ("ELECTRA-15% and BERT") is read as a format: the help either crashes or
prints the action's ``__dict__`` (``{'option_strings': [], 'dest': ...}``) in the middle of the
list. The walk below reaches every parser that ``minilm/commands/`` registers — every train
family, every experiment — and renders its help in-process; one subprocess check covers the
installed ``minilm`` entry point.
"""
from __future__ import annotations

import argparse
import importlib
import pkgutil
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from minilm import cli
from minilm.experiments import available as experiments
from minilm.recipes import available as families

# What leaks when a help string goes through %-formatting wrongly, or is never formatted at all.
BAD = ("%(", "%%", "{'option_strings'", "'dest':", "'container':", "<built-in", " object at 0x")


def walk(parser: argparse.ArgumentParser, path=()):
    """(path, parser) for the parser and every sub-parser under it, depth first."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from walk(sub, path + (name,))


PARSERS = dict(walk(cli.build_parser()))


def test_the_walk_reaches_every_command_family_and_experiment():
    import minilm.commands as pkg
    commands = {i.name for i in pkgutil.iter_modules(pkg.__path__) if not i.name.startswith("_")}
    # a module's "_" is the command's "-" (fill_mask.py registers `minilm fill-mask`)
    assert {p[0] for p in PARSERS if len(p) == 1} == {c.replace("_", "-") for c in commands}
    assert {p[1] for p in PARSERS if p[:1] == ("train",) and len(p) == 2} == set(families())
    assert {p[1] for p in PARSERS if p[:1] == ("experiment",) and len(p) == 2} == set(experiments())
    assert all(importlib.import_module(f"minilm.commands.{c}") for c in commands)


@pytest.mark.parametrize("path", sorted(PARSERS), ids=lambda p: " ".join(("minilm",) + p))
def test_help_renders_cleanly(path, capsys):
    # through the real --help action, as a user runs it: prints the help, exits 0
    with pytest.raises(SystemExit) as exit_:
        cli.main([*path, "--help"])
    text = capsys.readouterr().out
    assert exit_.value.code == 0
    assert text.startswith("usage: minilm"), text[:200]
    leaked = [b for b in BAD if b in text]
    assert not leaked, f"`minilm {' '.join(path)} --help` shows {leaked}:\n{text}"
    # each sub-command's one-line help shows up as written (compared without the line wrapping)
    flat = "".join(text.split())
    for action in PARSERS[path]._actions:
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:
                assert "".join(choice.help.replace("%%", "%").split()) in flat, (choice.dest, choice.help)


def test_minilm_help_in_a_subprocess():
    """The installed entry point, as a user types it (``python -m minilm.cli`` where it is missing)."""
    script = shutil.which("minilm", path=str(Path(sys.executable).parent))
    command = [script] if script else [sys.executable, "-m", "minilm.cli"]
    done = subprocess.run([*command, "--help"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: minilm"), done.stdout[:200]
    assert not [b for b in BAD if b in done.stdout], done.stdout
    for name in ("demo", "train", "experiment", "generate", "grade"):
        assert name in done.stdout
