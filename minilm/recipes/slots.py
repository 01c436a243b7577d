"""Which task slots each command runs, so that ``--impl exercises`` can name every missing one at once.

``minilm --impl exercises train gpt`` runs the student's code in every slot on the GPT path; a stub
there stops the run with ``NotImplementedError("Task 4.1: causal_lm_loss")`` — one name per run. The
command line looks the path up here instead, before any work, and lists every slot on it that is
still the generated stub (``autograd.tasks.unfinished``: an AST check of exercises/).

The lists are data, ``slot_paths.json`` beside this file, recorded by ``python
tools/make_slot_paths.py`` with ``autograd.tasks.trace`` on the reference: ``paths`` holds, per recipe
and variant (``"roberta:wwm"``, from the recipe's ``@recipe(variants=...)``), the slots a 1-step
``minilm train`` calls, and the demo's; ``experiments`` the slots of each experiment's ``--quick``
run. tests/models/test_recipe_slots.py re-traces the paths and fails unless the file is current;
each experiment's slow test checks that its run calls no slot outside its list. A variant's list
is a full list; options that combine (``--whole-word-mask --packing doc``) apply each variant's
difference from the family's list. Should a run still meet a stub these lists miss, the
``NotImplementedError`` handler of ``minilm.cli`` names it, and then lists the path's others.
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

DATA = Path(__file__).with_name("slot_paths.json")


def slot_set(by_module: dict) -> frozenset:
    """``{"task04_gpt.loss": ["causal_lm_loss", ...]}`` -> ``{("task04_gpt.loss", "causal_lm_loss"), ...}``."""
    return frozenset((module, name) for module, names in by_module.items() for name in names)


def by_module(slots) -> dict:
    """The inverse of :func:`slot_set`, sorted: how the file stores a list."""
    out: dict = {}
    for module, name in sorted(slots):
        out.setdefault(module, []).append(name)
    return out


@lru_cache(maxsize=None)
def recorded() -> tuple[dict, dict]:
    """``(paths, experiments)``: ``{key: frozenset of (module, name)}`` each, read from ``DATA``."""
    data = json.loads(DATA.read_text(encoding="utf-8"))
    return ({key: slot_set(v) for key, v in data["paths"].items()},
            {key: slot_set(v) for key, v in data["experiments"].items()})


def train_variants(family: str, args) -> list[str]:
    """The path keys that ``minilm train FAMILY`` with these options runs: the family and the
    variants its options select (``minilm.recipes.variant_keys``)."""
    from minilm.recipes import get, variant_keys
    from minilm.recipes.config import from_args
    recipe = get(family)
    return variant_keys(recipe, from_args(recipe.Config, args))


def path_slots(keys) -> frozenset:
    """The slots of a path: the family's list, changed by each variant's difference from it."""
    paths, _ = recorded()
    keys = [k for k in keys if k in paths]
    if not keys:
        return frozenset()
    base = paths[keys[0].split(":")[0]]
    out = set(base)
    for key in keys:
        if ":" in key:
            out |= paths[key] - base
            out -= base - paths[key]
    return frozenset(out)


def command_slots(args) -> frozenset | None:
    """The slots that a parsed ``minilm`` command line runs, or None when it is not known here."""
    if args.command == "train" and getattr(args, "family", None):
        return path_slots(train_variants(args.family, args))
    paths, experiments = recorded()
    if args.command == "demo":
        return paths["demo"]
    if args.command == "experiment":
        return experiments.get(getattr(args, "experiment", None))
    return None


def missing_slots(args, impl: str = "exercises") -> list[tuple[str, str, str]] | None:
    """``autograd.tasks.unfinished`` of the command's path (None when the path is not known)."""
    from autograd import tasks
    slots = command_slots(args)
    return None if slots is None else tasks.unfinished(slots, impl)


def describe_missing(missing) -> str:
    """One line per unfinished slot, ``Task 7.2  exercises/task07_electra/loss.py: electra_loss``."""
    lines = []
    for task, qualname, why in missing:
        module, _, name = qualname.rpartition(".")
        where = f"exercises/{module.replace('.', '/')}.py: {name}"
        lines.append(f"  Task {task:<5} {where}" + ("" if why == "stub" else f"  ({why})"))
    return "\n".join(lines)
