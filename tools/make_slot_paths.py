"""Record the task slots each command path calls, into minilm/recipes/slot_paths.json.

``minilm --impl exercises train FAMILY`` lists every unfinished task on the family's path before any
work (minilm/recipes/slots.py); this tool writes the lists it reads, by running each path on the
reference under ``autograd.tasks.trace``:

* every family of ``minilm.recipes.available()`` and each of its ``@recipe(variants=...)``: a 1-step
  ``minilm train`` (on 20 documents, a teacher of 1 step: sizes change no path), as a user types it;
* ``minilm demo --steps 2``;
* with ``--experiments``, each experiment's ``--quick --seeds 1`` run, in this process (about ten
  minutes); without it, the experiments' lists are kept as they are.

    python tools/make_slot_paths.py                 # the train paths and the demo (about a minute)
    python tools/make_slot_paths.py --experiments   # and every experiment
    python tools/make_slot_paths.py --check         # exit 1 if the train paths or the demo changed

tests/models/test_recipe_slots.py runs ``--check``'s comparison, so the file cannot fall behind a
recipe; each experiment's slow test checks that its run calls no slot outside its list.
"""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autograd import tasks  # noqa: E402
from minilm.recipes import slots  # noqa: E402
from minilm.recipes.config import option_name  # noqa: E402


SMALL = {"docs": 20, "teacher_pretrain_steps": 1, "teacher_steps": 1, "n_train": 64, "n_test": 64}  # where a family has them


def train_commands() -> dict[str, list[str]]:
    """``{path key: minilm argv}``: a 1-step run of each family and of each of its variants, on
    ``SMALL`` data (the sizes change no code path)."""
    from minilm.recipes import available
    out = {}
    for family, recipe in available().items():
        fields = {f.name for f in dataclasses.fields(recipe.Config)}
        base = ["train", family, "--steps", "1", "--no-progress"]
        for field, value in SMALL.items():
            base += [option_name(field), str(value)] if field in fields else []
        out[family] = base
        for name, settings in recipe.variants.items():
            argv = list(base)
            for field, value in settings.items():
                argv += [option_name(field)] if value is True else [option_name(field), str(value)]
            out[f"{family}:{name}"] = argv
    return out


def traced(argv: list[str]) -> frozenset:
    """The slots ``minilm ARGV --out TMP`` calls on the reference (its output swallowed)."""
    from minilm import cli
    with tempfile.TemporaryDirectory() as out, tasks.trace() as seen, \
            contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
        code = cli.main(["--impl", "solutions", *argv, "--out", out])
    if code != 0:
        raise SystemExit(f"make_slot_paths: minilm {' '.join(argv)} failed (exit {code}):\n{err.getvalue()[-2000:]}")
    return frozenset(seen)


def trace_paths() -> dict[str, frozenset]:
    """``{key: slots}`` of every train path and of the demo, traced now."""
    commands = {**train_commands(), "demo": ["demo", "--steps", "2", "--no-plot"]}
    return {key: traced(argv) for key, argv in commands.items()}


def trace_experiments() -> dict[str, frozenset]:
    """``{name: slots}`` of each experiment's ``--quick --seeds 1`` run, in this process."""
    from minilm.experiments import available
    from minilm.experiments.runner import run_experiment
    out = {}
    for name, module in available().items():
        print(f"  tracing minilm experiment {name} --quick --seeds 1", file=sys.stderr, flush=True)
        with tempfile.TemporaryDirectory() as tmp, tasks.use("solutions"), tasks.trace() as seen, \
                contextlib.redirect_stdout(io.StringIO()):
            run_experiment(name, module, quick=True, seeds=[0], out_dir=tmp, jobs=1, progress=False)
        out[name] = frozenset(seen)
    return out


def render(paths: dict, experiments: dict) -> str:
    """The JSON file, one line per module of a list (so that a diff shows the slot that moved)."""
    def block(table: dict, indent: str) -> str:
        rows = []
        for key in sorted(table):
            modules = slots.by_module(table[key])
            inner = ",\n".join(f'{indent}    {json.dumps(m)}: {json.dumps(names)}' for m, names in modules.items())
            rows.append(f'{indent}  {json.dumps(key)}: {{\n{inner}\n{indent}  }}')
        return "{\n" + ",\n".join(rows) + f"\n{indent}}}"
    about = ("written by tools/make_slot_paths.py: the task slots each minilm train path, the demo and each "
             "experiment call on the reference (read by minilm/recipes/slots.py)")
    return (f'{{\n  "about": {json.dumps(about)},\n  "paths": {block(paths, "  ")},\n'
            f'  "experiments": {block(experiments, "  ")}\n}}\n')


def differences(old: dict, new: dict) -> list[str]:
    """One line per key whose slots differ: what the file lacks (+) and what it has too many (-)."""
    lines = []
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key, frozenset()), new.get(key, frozenset())
        if a != b:
            add = ", ".join(f"{m}.{n}" for m, n in sorted(b - a))
            drop = ", ".join(f"{m}.{n}" for m, n in sorted(a - b))
            lines.append(f"{key}:" + (f" + {add}" if add else "") + (f" - {drop}" if drop else ""))
    return lines


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--check", action="store_true", help="compare the train paths and the demo with the file; "
                                                         "exit 1 if they differ")
    p.add_argument("--experiments", action="store_true", help="also re-trace every experiment (about ten minutes)")
    args = p.parse_args(argv)
    old_paths, old_experiments = slots.recorded()
    paths = trace_paths()
    if args.check:
        problems = differences(old_paths, paths)
        if problems:
            print("make_slot_paths: minilm/recipes/slot_paths.json is not current; run python tools/make_slot_paths.py\n  "
                  + "\n  ".join(problems), file=sys.stderr)
            return 1
        print(f"make_slot_paths: {len(paths)} paths current")
        return 0
    experiments = trace_experiments() if args.experiments else old_experiments
    slots.DATA.write_text(render(paths, experiments), encoding="utf-8")
    print(f"make_slot_paths: wrote {slots.DATA.relative_to(ROOT)} ({len(paths)} paths, {len(experiments)} experiments)")
    for line in differences(old_paths, paths) + differences(old_experiments, experiments):
        print("  " + line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
