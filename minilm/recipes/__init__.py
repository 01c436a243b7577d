"""One *recipe* per family for ``minilm train FAMILY``: the data, the model and the objective.

A recipe module ``minilm/recipes/FAMILY.py`` defines

    FamilyRecipeConfig    a dataclass: every setting of a run, with its default and a comment
                          (``minilm train FAMILY --help`` is generated from it: minilm/recipes/config.py);
                          it extends ``RecipeConfig`` (minilm.train's schedule: steps, lr, warm-up, ...),
                          or ``CorpusConfig`` (+ --corpus, --docs) for a family that reads documents
    CONFIG                that dataclass
    build(cfg) -> Recipe  the object ``minilm.train.train`` trains (the protocol below)
    describe              the recipe's ``describe``, at module level

Experiments and tests change a setting with ``dataclasses.replace``::

    from dataclasses import replace
    from minilm.recipes import roberta
    cfg = replace(roberta.CONFIG(), masking="static", seed=3)
    recipe = roberta.build(cfg)
    summary = train(recipe, cfg.train_config(), out_dir)

To add a family:

1. ``minilm/models/FAMILY.py``: the model and its config dataclass (leaves first, shapes in comments).
2. The lessons it needs as task slots under ``solutions/taskNN_*/`` (then ``python
   tools/make_exercises.py``), a graded test in ``tests/graded/`` and a page in ``docs/tasks/`` (and
   ``docs/tasks/zh-TW/``); the library binds each slot once, with ``autograd.tasks.bind``.
3. ``minilm/recipes/FAMILY.py``: ``FamilyRecipeConfig``, the recipe class (the protocol below,
   ``describe`` included), ``CONFIG``, ``describe`` and ``build``.
4. The registry: a line in ``FAMILIES`` below (``minilm train --help`` lists it from there).
5. The slots its path runs: an entry in ``PATHS`` of ``minilm/recipes/slot_paths.py`` (recorded with
   ``autograd.tasks.trace``; tests/models/test_recipe_slots.py checks it), so that ``minilm --impl
   exercises train FAMILY`` names the unfinished tasks.
6. Checkpoints need nothing more if the model is built as ``Model(config, *, rng)``: the checkpoint
   names the model's and the config's classes (``minilm/checkpoint.py:model_meta``).
7. A test: ``tests/models/test_FAMILY.py`` (a 2-step ``train`` of a tiny ``replace(CONFIG(), ...)``,
   ``describe`` on the summary); tests/models/test_cli_help.py (its ``--help``) and
   tests/models/test_recipe_config.py (a comment on every field) pick the family up by themselves.
8. Docs: the README's "Results in miniature" block and its list of families (README.zh-TW.md too).
"""
from __future__ import annotations

import importlib
from typing import Any, Protocol

from autograd.errors import MiniLMError

FAMILIES = {
    "gpt": "minilm.recipes.gpt",
    "bert": "minilm.recipes.bert",
    "roberta": "minilm.recipes.roberta",
    "electra": "minilm.recipes.electra",
    "xlnet": "minilm.recipes.xlnet",
    "t5": "minilm.recipes.t5",
    "bart": "minilm.recipes.bart",
    "prefixlm": "minilm.recipes.prefixlm",
    "distill": "minilm.recipes.distill",
    "transformer-xl": "minilm.recipes.transformer_xl",
    "deberta": "minilm.recipes.deberta",
}


class Recipe(Protocol):
    """What ``minilm.train.train`` needs of a family (``build(cfg)`` returns one)."""

    family: str          # the registry name; a checkpoint records it, and --resume checks it
    model: Any           # the autograd ``nn.Module`` that is trained
    model_config: Any    # its config dataclass, saved with the checkpoint
    tokenizer: Any       # saved with the checkpoint; None when the data is token ids only

    def batch(self, rng) -> Any:
        """One training batch, drawn with ``rng`` (``default_rng([seed, step])``) only."""

    def loss(self, model, batch) -> tuple[Any, dict]:
        """(loss Tensor, metrics): the objective on one batch; metrics are floats (``tokens`` counts)."""

    def evaluate(self, model) -> dict:
        """Held-out metrics, ``loss`` among them, computed the same way at every evaluation."""

    def baselines(self) -> dict:
        """What the summary compares the trained model with (a bigram model, chance, ...)."""

    def describe(self, summary: dict) -> str:
        """The summary ``minilm train`` prints: the result against the baselines."""


def available() -> dict:
    """``{family: recipe module}`` for every family of ``FAMILIES``, imported (:func:`import_all`)."""
    return import_all(FAMILIES, "family")


def import_all(table: dict[str, str], kind: str) -> dict:
    """``{name: module}`` for every ``{name: dotted module path}`` of ``table``, imported.

    A module that fails to import is an error that names it, its module and the import error:
    skipping it would make the family (or experiment) silently disappear from ``minilm train`` (or
    ``minilm experiment``) and from the tests that loop over them, hiding the breakage."""
    out = {}
    for name, module in table.items():
        try:
            out[name] = importlib.import_module(module)
        except ImportError as err:
            raise MiniLMError(f"minilm: the {kind} {name!r} cannot be used: its module {module} "
                              f"failed to import ({type(err).__name__}: {err})") from err
    return out
