"""One *recipe* per family for ``minilm train FAMILY``: the data, the model and the objective.

A recipe module ``minilm/recipes/FAMILY.py`` defines

    FamilyRecipeConfig    a dataclass: every setting of a run, with its default and a comment
                          (``minilm train FAMILY --help`` is generated from it: minilm/recipes/config.py);
                          it extends ``RecipeConfig``, or ``CorpusConfig`` (+ --corpus, --docs) for a
                          family that reads documents (one that reads no text, a toy task's, says why
                          in its module's ``NO_CORPUS``), and holds two configs as fields: ``model``, the
                          model's own config, and ``train``, minilm.train's schedule (steps, lr, ...),
                          each with the recipe's defaults (``nested(...)``)
    FamilyRecipe          the object ``minilm.train.train`` trains (the protocol below), built as
                          ``FamilyRecipe(cfg)`` and registered with the decorator :func:`recipe`::

        @recipe("roberta", config=RobertaRecipeConfig, chapter=6,
                variants={"static": {"masking": "static"}, "wwm": {"whole_word_mask": True}})
        class RobertaRecipe: ...

Experiments and tests change settings by their option names, wherever the config nests them
(``n_layer`` is ``cfg.model.n_layer``, ``seed`` is ``cfg.train.seed``)::

    from minilm.recipes.config import override
    from minilm.recipes.roberta import RobertaRecipe, RobertaRecipeConfig
    cfg = override(RobertaRecipeConfig(), masking="static", seed=3, n_layer=1)
    recipe = RobertaRecipe(cfg)
    summary = train(recipe, cfg.train_config(), out_dir)

To add a family:

1. ``minilm/models/FAMILY.py``: the model and its config dataclass (leaves first, shapes in comments).
2. The lessons it needs as task slots under ``solutions/taskNN_*/`` (then ``python
   tools/make_exercises.py``), a graded test in ``tests/graded/`` and a page in ``docs/tasks/`` (and
   ``docs/tasks/zh-TW/``); the library binds each slot once, with ``autograd.tasks.bind``.
3. ``minilm/recipes/FAMILY.py``: ``FamilyRecipeConfig`` and the recipe class (the protocol below,
   ``describe`` included) under ``@recipe(...)``: :func:`available` finds it by importing every module
   of this package, and ``minilm train --help`` lists it in chapter order.
4. The slots its path runs: ``python tools/make_slot_paths.py`` traces a short run of the family and
   of each of its ``variants`` into ``slot_paths.json`` (tests/models/test_recipe_slots.py checks the
   file is current), so that ``minilm --impl exercises train FAMILY`` names the unfinished tasks.
5. Checkpoints need nothing more if the model is built as ``Model(config, *, rng)``: the checkpoint
   names the model's and the config's classes (``minilm/checkpoint.py:model_meta``).
6. A test: ``tests/models/test_FAMILY.py`` (a 2-step ``train`` of a tiny ``replace(FamilyRecipeConfig(), ...)``,
   ``describe`` on the summary); tests/models/test_cli_help.py (its ``--help``) and
   tests/models/test_recipe_config.py (a comment on every field) pick the family up by themselves.
7. Docs: the README's "Results in miniature" block and its list of families (README.zh-TW.md too).
"""
from __future__ import annotations

import importlib
from typing import Any, Protocol

from autograd.errors import MiniLMError


class Recipe(Protocol):
    """What ``minilm.train.train`` needs of a family (``FamilyRecipe(cfg)`` is one)."""

    family: str          # the registry name (set by @recipe); a checkpoint records it, --resume checks it
    Config: type         # its config dataclass (set by @recipe)
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


_REGISTRY: dict[str, type] = {}   # family -> recipe class, filled by @recipe as the modules import
_HELPERS = ("common", "config", "seq2seq", "slots")  # modules of this package that hold no recipe


def recipe(family: str, *, config: type, chapter: int, variants: dict | None = None):
    """Class decorator: register a recipe class as ``minilm train FAMILY``.

    ``config``: its config dataclass (``cls.Config``); ``chapter``: the course module that teaches
    the family (Task N), the order of ``minilm train --help``; ``variants``: ``{name: {field:
    value}}``, the settings that change which task slots a run calls (``minilm train roberta
    --masking static`` is the variant ``roberta:static``; see :func:`variant_keys`)."""
    def register(cls):
        if family in _REGISTRY and _REGISTRY[family] is not cls:
            raise MiniLMError(f"@recipe: two recipes claim the family {family!r}: "
                              f"{_REGISTRY[family].__module__} and {cls.__module__}")
        cls.family, cls.Config, cls.chapter, cls.variants = family, config, chapter, dict(variants or {})
        _REGISTRY[family] = cls
        return cls
    return register


def available() -> dict:
    """``{family: recipe class}`` of every recipe of this package, in chapter order.

    Imports every module of ``minilm/recipes/`` (:func:`import_all`): a module that fails to import
    is an error naming it, not a family that silently disappears from ``minilm train``."""
    import pkgutil
    names = sorted(m.name for m in pkgutil.iter_modules(__path__) if m.name not in _HELPERS)
    import_all({name: f"{__name__}.{name}" for name in names}, "recipe module")
    return dict(sorted(_REGISTRY.items(), key=lambda item: (item[1].chapter, item[0])))


def get(family: str) -> type:
    """The recipe class of ``family`` (an error that lists the families when there is none)."""
    families = available()
    if family not in families:
        raise MiniLMError(f"minilm: no recipe {family!r}; the families are {', '.join(families)}")
    return families[family]


def variant_keys(cls, cfg) -> list[str]:
    """``["roberta", "roberta:static", ...]``: the family and each of its variants that ``cfg`` selects.

    A variant is selected when every field it names has its value in ``cfg``. A '+'-joined str value
    (BART's ``--noising infilling+permutation+rotation``) adds to the default's parts: the variant is
    selected when ``cfg``'s value has the parts it adds (``--noising masking+rotation`` too)."""
    from minilm.recipes.config import leaves
    values = {name: leaf[3] for name, leaf in leaves(cls.Config, cfg).items()}      # nested fields too
    defaults = {name: leaf[3] for name, leaf in leaves(cls.Config).items()}

    def selects(field, want):
        have = values[field]
        if isinstance(want, str) and "+" in want:
            adds = set(want.split("+")) - set(str(defaults[field]).split("+"))
            return adds <= set(str(have).split("+"))
        return have == want
    return [cls.family] + [f"{cls.family}:{name}" for name, fields in cls.variants.items()
                           if all(selects(f, v) for f, v in fields.items())]


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
