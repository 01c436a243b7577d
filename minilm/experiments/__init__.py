"""``minilm experiment NAME``: the evidence the course cites, re-run in miniature over several seeds.

Each experiment is a module here with

    NAME, HELP                 the command's name and one-line help; the module docstring is --help
    CONFIG                     a dataclass of every setting of the experiment, one comment each; its
                               defaults are the full-size run, ``CONFIG.quick()`` the --quick sizes.
                               An experiment of one family holds that family's recipe config as
                               ``recipe`` (:func:`recipe_field`): the recipe's sizes, model and
                               schedule, changed only where the experiment says so
    OPTIONS                    the fields offered on the command line (``minilm experiment NAME
                               --help`` is generated from them: minilm/recipes/config.py); ``corpus``
                               among them (``--corpus real``: the English text minilm ships), or
    NO_CORPUS                  why the experiment reads no pre-training text, which ``--corpus``
                               then answers with
    plan(cfg) -> Plan          the conditions compared, the metrics reported, the sizes to run at,
                               and the paper's findings as claims the table is checked against
                               (``minilm.experiments.claims``: the page's "Agrees with the paper?")
    run_one(condition, seed, settings) -> {metric: float}
                               one pre-train + evaluate run; a pure function of its arguments, so
                               runs can go to other processes (--jobs) and be reused (--resume).
                               ``settings`` is :func:`settings_of` the config (flat: one entry per
                               option name); :func:`config_of` turns it back into the config

and ``minilm.experiments.runner`` does the rest for every one of them: the seeds loop, a progress
bar, mean ± standard deviation over seeds, a Markdown table (printed, and written to
OUT/NAME.md), a PNG (OUT/NAME.png) and every run's numbers (OUT/NAME.json). Code and tests change
a setting with ``override`` (by its option name, wherever it is nested), as the command line does::

    from minilm.experiments import masking
    from minilm.experiments.runner import run_experiment
    from minilm.recipes.config import override
    cfg = override(masking.CONFIG.quick(), steps=20)            # minilm experiment masking --quick --steps 20
    run_experiment("masking", masking, cfg, quick=True, seeds=[0], out_dir="runs/experiments")

Each ``plan`` writes its metrics and notes out in full, so plans look alike line by line (a
``Metric`` list, then the notes' prose) on purpose: they are declarations, not shared logic.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from minilm.recipes.config import leaves, nested, override

EXPERIMENTS = {
    "electra-ablation": "minilm.experiments.electra_ablation",
    "generator-size": "minilm.experiments.generator_size",
    "masking": "minilm.experiments.masking",
    "new-york": "minilm.experiments.new_york",
    "architectures": "minilm.experiments.architectures",
    "distillation": "minilm.experiments.distillation",
    "distillation-transfer": "minilm.experiments.distillation_transfer",
    "deberta-vs-bert": "minilm.experiments.deberta_vs_bert",
    "gpt-vs-bert": "minilm.experiments.gpt_vs_bert",
    "bart-noising": "minilm.experiments.bart_noising",
    "batch-size": "minilm.experiments.batch_size",
    "roberta-inputs": "minilm.experiments.roberta_inputs",
    "data-and-steps": "minilm.experiments.data_and_steps",
    "electra-efficiency": "minilm.experiments.electra_efficiency",
    "bakeoff": "minilm.experiments.bakeoff",
}


@dataclass
class Metric:
    key: str                # the key in run_one's dict
    label: str              # the column header
    percent: bool = True    # shown as a percentage (values in [0, 1]) or as a plain number
    higher_is_better: bool = True


@dataclass
class Plan:
    """What one experiment compares. ``settings`` must hold everything ``run_one`` needs besides the
    condition and the seed (sizes, steps, learning rates): it is written beside the results, and a
    --resume reuses earlier runs only if it is unchanged."""
    title: str                          # one line: the question the table answers
    conditions: list[str]               # the table's rows, in order
    metrics: list[Metric]               # its columns; the first (and second, if any) are plotted
    settings: dict                      # settings_of(the config): what run_one reads
    x: dict | None = None               # a number per condition: the plot becomes a line over x (a condition
                                        # left out, such as an untrained reference, is a dashed level)
    xlabel: str = ""
    notes: list[str] = field(default_factory=list)  # lines printed under the table
    series: dict | None = None          # a line name per condition: one line per name over x (default: one line)
    claims: list = field(default_factory=list)  # the paper's findings as orderings of the table (claims.py)


def available() -> dict:
    """NAME -> module for every experiment; one that fails to import is an error naming it."""
    from minilm.recipes import import_all
    return import_all(EXPERIMENTS, "experiment")


# The schedule's fields that every run of an experiment sets itself: its seed (the runner's), and one
# evaluation and one checkpoint, at the end.
RUN_FIELDS = ("seed", "eval_every", "checkpoint_every")


def recipe_field(default, *, set_by_rows=(), **changes):
    """The ``recipe`` field of an experiment's config: the recipe config ``default`` with ``changes``
    (option names: ``steps=300``). Hidden (no option, not in the settings): the fields each run sets
    (:data:`RUN_FIELDS`) and ``set_by_rows``, those the experiment's rows vary (``masking``)."""
    return nested(override(default, **changes), set_by_recipe=RUN_FIELDS + tuple(set_by_rows))


def settings_of(cfg) -> dict:
    """``{option name: value}`` of every field of an experiment's config, the nested recipe's (its
    own, its model's and its schedule's) included: what the records show and ``run_one`` receives."""
    return {name: leaf[3] for name, leaf in leaves(type(cfg), cfg).items()}


def positive_numbers(text, name: str, flag: str, example: str) -> list[float]:
    """The numbers of a comma-separated option such as ``--lr-factors 0.5,1,2`` (``text``), each > 0;
    a ConfigError that names the experiment (``name``) and the flag otherwise."""
    from autograd.errors import ConfigError
    try:
        numbers = [float(x) for x in str(text).split(",") if x.strip()]
    except ValueError:
        raise ConfigError(f"{name}: {flag} {text!r}: expected numbers such as {example}") from None
    if not numbers or min(numbers) <= 0:
        raise ConfigError(f"{name}: {flag} {text!r}: expected positive numbers such as {example}")
    return numbers


def config_of(cls, settings: dict):
    """The config ``cls`` that :func:`settings_of` flattened into ``settings``."""
    return override(cls(), **settings)


def run_schedule(recipe_cfg, seed, steps: int | None = None):
    """The ``minilm.train`` schedule of one run: the recipe's (``steps`` of them if given, the
    warm-up no longer than the run), this run's ``seed``, one evaluation and one checkpoint, at the end."""
    from dataclasses import replace
    train = recipe_cfg.train
    steps = train.steps if steps is None else steps
    return replace(train, steps=steps, warmup=min(train.warmup, steps), eval_every=steps, checkpoint_every=steps,
                   seed=seed)
