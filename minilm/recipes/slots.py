"""Which task slots each command runs, so that ``--impl exercises`` can name every missing one at once.

``minilm --impl exercises train gpt`` runs the student's code in every slot on the GPT path; a stub
there stops the run with ``NotImplementedError("Task 4.1: causal_lm_loss")`` — one name per run. The
command line looks the path up here instead, before any work, and lists every slot on it that is
still the generated stub (``autograd.tasks.unfinished``: an AST check of exercises/).

``PATHS`` (in slot_paths.py) holds, per recipe and variant, the slots a short ``minilm train`` run
calls on the reference (recorded with ``autograd.tasks.trace``; tests/models/test_recipe_slots.py
re-traces the runs and fails if a slot is missing). A variant key (``"roberta:wwm"``) is a full
list; options that combine (``--whole-word-mask --packing doc``) apply each variant's difference
from the family's default list. ``EXPERIMENTS`` names the recipe paths each experiment trains, with
the slots its fine-tuning adds. Should a run still meet a stub these lists miss, the
``NotImplementedError`` handler of ``minilm.cli`` names it, and then lists the path's others.
"""
from __future__ import annotations

from .slot_paths import EXPERIMENTS, PATHS, _slots


def train_variants(family: str, args) -> list[str]:
    """The PATHS keys that ``minilm train FAMILY`` with these options runs."""
    keys = [family]
    if family in ("bert", "roberta") and getattr(args, "whole_word_mask", False):
        keys.append(f"{family}:wwm")
    if family == "roberta" and getattr(args, "masking", None) == "static":
        keys.append("roberta:static")
    if family == "roberta" and getattr(args, "packing", "full") != "full":
        keys.append(f"roberta:{args.packing}")  # doc, segment-pair, sentence-pair
    if family == "electra" and getattr(args, "objective", "electra") != "electra":
        keys.append(f"electra:{args.objective}")
    if family == "prefixlm" and getattr(args, "arch", None) == "causal":
        keys.append("prefixlm:causal")
    if family == "bart" and "rotation" in str(getattr(args, "noising", "")):
        keys.append("bart:rotation")
    return keys


def path_slots(keys) -> frozenset:
    """The slots of a path: the family's list, changed by each variant's difference from it."""
    keys = [k for k in keys if k in PATHS]
    if not keys:
        return frozenset()
    base = PATHS[keys[0].split(":")[0]]
    out = set(base)
    for key in keys:
        if ":" in key:
            out |= PATHS[key] - base
            out -= base - PATHS[key]
    return frozenset(out)


def command_slots(args) -> frozenset | None:
    """The slots that a parsed ``minilm`` command line runs, or None when it is not known here."""
    if args.command == "train" and getattr(args, "family", None):
        return path_slots(train_variants(args.family, args))
    if args.command == "demo":
        return PATHS["demo"]
    if args.command == "experiment":
        plan = EXPERIMENTS.get(getattr(args, "experiment", None))
        if plan is None:
            return None
        keys, add, drop = plan
        paths = frozenset().union(*(path_slots([k.split(":")[0], k]) for k in keys))
        return (paths | _slots(*add)) - _slots(*drop)
    return None


def missing_slots(args, impl: str = "exercises") -> list[tuple[str, str, str]] | None:
    """``autograd.tasks.unfinished`` of the command's path (None when the path is not known)."""
    from autograd import tasks
    slots = command_slots(args)
    return None if slots is None else tasks.unfinished(slots, impl)


def describe_missing(missing) -> str:
    """One line per unfinished slot, ``Task 7.2  exercises/task07_electra/loss.py: generator_step``."""
    lines = []
    for task, qualname, why in missing:
        module, _, name = qualname.rpartition(".")
        where = f"exercises/{module.replace('.', '/')}.py: {name}"
        lines.append(f"  Task {task:<5} {where}" + ("" if why == "stub" else f"  ({why})"))
    return "\n".join(lines)
