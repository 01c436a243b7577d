"""One *recipe* per family for ``minilm train FAMILY``: the data, the model and the objective.

A recipe module defines ``add_arguments(parser)`` (its own options, with defaults small enough for
a laptop) and ``build(args) -> recipe`` (an object with ``family, model, model_config, tokenizer,
batch(rng), loss(model, batch), evaluate(model), baselines()``; see ``minilm/train.py``).
The registry maps each family name to its module; ``minilm train --help`` lists them.
"""
import argparse
import importlib

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


def available() -> dict:
    """The families whose recipe module imports (a partial checkout may lack some)."""
    out = {}
    for name, module in FAMILIES.items():
        try:
            out[name] = importlib.import_module(module)
        except ImportError:
            continue
    return out


def recipe_args(module, **overrides) -> argparse.Namespace:
    """What ``minilm train FAMILY`` would pass to ``module.build`` with no options given (the
    recipe's ``add_arguments`` defaults, ``seed=0``), with ``overrides`` in underscored names
    (``masking="static"``): how experiments and tests build a recipe without a command line."""
    from autograd.errors import ConfigError
    p = argparse.ArgumentParser()
    module.add_arguments(p)
    args = p.parse_args([])
    args.seed = 0
    for key, value in overrides.items():
        if not hasattr(args, key):
            raise ConfigError(f"recipe_args: {module.__name__} has no option {key!r}")
        setattr(args, key, value)
    return args
