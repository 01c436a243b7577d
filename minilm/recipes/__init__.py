"""One *recipe* per family for ``minilm train FAMILY``: the data, the model and the objective.

A recipe module defines ``add_arguments(parser)`` (its own options, with defaults small enough for
a laptop) and ``build(args) -> recipe`` (an object with ``family, model, model_config, tokenizer,
batch(rng), loss(model, batch), evaluate(model), baselines()``; see ``minilm/train.py``).
The registry maps each family name to its module; ``minilm train --help`` lists them.
"""
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
