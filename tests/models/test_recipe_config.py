"""One configuration path: the recipes' config dataclasses and the command-line options generated
from them (minilm/recipes/config.py)."""
from __future__ import annotations

import argparse
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal, Optional

import pytest

from autograd.errors import ConfigError
from minilm.recipes import available
from minilm.recipes.config import add_options, field_comments, from_args, nested, override


@dataclass
class Base:
    steps: int = 10                 # optimizer steps
    rate: float = 0.5               # a share, 50% by default


@dataclass
class Child(Base):
    # a section comment: not the help of the field above it
    name: str = "x"                 # a name that needs
                                    # two lines of help
    path: Optional[Path] = None     # a file (default: none)
    kind: Literal["a", "b"] = "a"   # one of two
    width: Optional[int] = None     # a width (default: the model's)
    flag: bool = False              # switch it on
    steps: int = 20


def _parser(cls, **kw):
    p = argparse.ArgumentParser(prog="t")
    add_options(p, cls, **kw)
    return p


def test_comments_are_the_help_and_a_redeclared_default_keeps_it():
    comments = field_comments(Child)
    assert comments["name"] == "a name that needs two lines of help"
    assert comments["steps"] == "optimizer steps"       # Child only changes the default
    assert comments["rate"] == "a share, 50% by default"
    helps = {a.dest: a.help for a in _parser(Child)._actions}
    assert helps["steps"] == "optimizer steps (default 20)"
    assert helps["rate"] == "a share, 50%% by default (default 0.5)"   # argparse %-formats help
    assert helps["path"] == "a file (default: none)"                   # None: the comment says what it means
    assert helps["flag"] == "switch it on"


def test_types_defaults_choices_and_the_round_trip():
    p = _parser(Child)
    assert from_args(Child, p.parse_args([])) == Child()
    cfg = from_args(Child, p.parse_args(["--steps", "3", "--rate", "0.25", "--name", "y", "--path", "f.txt",
                                         "--kind", "b", "--width", "8", "--flag"]))
    assert cfg == Child(steps=3, rate=0.25, name="y", path=Path("f.txt"), kind="b", width=8, flag=True)
    with pytest.raises(SystemExit):
        p.parse_args(["--kind", "c"])                  # Literal -> choices
    assert "--steps" not in _parser(Child, skip=("steps",)).format_help()


def test_an_annotation_without_an_option_is_refused():
    @dataclass
    class Bad:
        sizes: list[int] = None  # several sizes

    with pytest.raises(ConfigError, match="Bad.sizes"):
        _parser(Bad)


@pytest.mark.parametrize("family", sorted(available()))
def test_every_family_parses_to_its_own_defaults_and_documents_each_option(family):
    recipe = available()[family]
    p = argparse.ArgumentParser()
    p.add_argument("--seed", type=int, default=0, help="the command's")
    p.add_argument("--out", type=Path, default=None, help="the command's")
    add_options(p, recipe.Config, skip=("seed", "out"))
    assert from_args(recipe.Config, p.parse_args([])) == recipe.Config()
    undocumented = [a.dest for a in p._actions if a.dest != "help" and not a.help]
    assert not undocumented, f"{family}: fields without a comment: {undocumented}"
    assert recipe.family == family and callable(recipe.describe)


def test_train_config_caps_the_periods_and_refuses_zero_steps():
    from minilm.recipes import xlnet
    cfg = override(xlnet.XLNetRecipeConfig(), steps=30).train_config()
    assert (cfg.steps, cfg.lr, cfg.warmup, cfg.eval_every, cfg.checkpoint_every) == (30, 2e-3, 100, 30, 30)
    with pytest.raises(ConfigError, match="steps=0"):
        override(xlnet.XLNetRecipeConfig(), steps=0).train_config()


def test_electra_defaults_and_objectives_come_from_the_model():
    from minilm.experiments import electra_ablation
    from minilm.models.electra import OBJECTIVES, ElectraConfig
    from minilm.recipes import electra
    cfg = electra.ElectraRecipeConfig()
    model = ElectraConfig(vocab_size=400, dropout=0.0)                   # the recipe's model: dropout off
    assert cfg.model == model and cfg.train.lr == 2e-3
    p = _parser(electra.ElectraRecipeConfig, skip=("seed",))
    assert next(a for a in p._actions if a.dest == "objective").choices == OBJECTIVES
    assert electra_ablation.CONFIG().recipe == override(cfg, steps=300, warmup=30, temperature=2.0)  # a shorter run, T = 2


@dataclass
class Inner:
    width: int = 8                  # the width
    vocab: int = 100                # set by the owner


@dataclass
class Outer:
    inner: Inner = nested(Inner(width=16), set_by_recipe=("vocab",))
    rate: float = 0.5               # a rate


def test_nested_configs_are_options_by_their_own_names_and_override_reaches_them():
    p = _parser(Outer)
    helps = {a.dest: a.help for a in p._actions}
    assert helps["width"] == "the width (default 16)" and "vocab" not in helps   # the owner sets vocab
    cfg = from_args(Outer, p.parse_args(["--width", "4", "--rate", "0.25"]))
    assert cfg == Outer(inner=Inner(width=4), rate=0.25)
    assert override(Outer(), width=2).inner == Inner(width=2) and Outer().inner.width == 16
    with pytest.raises(ConfigError, match="no option \\['vocab'\\]"):
        override(Outer(), vocab=3)                                   # not an option: the owner's


def test_two_fields_of_one_name_in_the_tree_are_an_error():
    @dataclass
    class Clash:
        inner: Inner = nested(Inner())
        width: int = 3              # the outer width

    with pytest.raises(ConfigError, match="two fields are called 'width'"):
        _parser(Clash)


def test_the_learning_rate_has_three_shapes_from_the_command_line_to_the_optimizer():
    """--lr: the Namespace, the recipe config's TrainConfig (declared once, in minilm.train), the
    optimizer's group["lr"] — the schedule multiplies that one in place."""
    from minilm.recipes import gpt
    p = argparse.ArgumentParser()
    p.add_argument("--seed", type=int, default=0, help="the command's")
    add_options(p, gpt.GPTRecipe.Config, skip=("seed",))
    cfg = from_args(gpt.GPTRecipe.Config, p.parse_args(["--lr", "0.01"]))
    assert cfg.train.lr == 0.01 and cfg.train_config().lr == 0.01
    assert not hasattr(gpt.GPTRecipe.Config, "lr")               # not declared a second time