"""ELECTRA's ablations at equal pre-training compute: where does its gain over BERT come from?

Clark et al. 2020, §3.2 and Table 5 (GLUE dev score, small models, same compute): ELECTRA 85.0,
All-Tokens MLM 84.3, Replace MLM 82.4, ELECTRA 15% 82.4, BERT 82.2. ELECTRA learns from every input
token (the discriminator labels each one original or replaced); ELECTRA 15% computes that loss on
the masked 15% only; Replace MLM is a masked LM that reads generator samples instead of [MASK];
All-Tokens MLM predicts every token (with a copy mechanism). The paper reads it as: most of the gain
comes from learning from all tokens, a smaller part from removing the [MASK] mismatch.

The miniature: every pre-trained row is one ``minilm train electra`` run (the recipe of
``minilm/recipes/electra.py`` with ``--objective electra | all_tokens_mlm | replace_mlm |
electra15``) with the same corpus, steps, batch, learning rate and width/depth of the network that
is kept (H = 64, 2 layers by default). "BERT (MLM)" is the same recipe with a full-width generator
and λ = 0: the generator alone, a plain masked LM reading [MASK] (ELECTRA's 85% [MASK] / 15% kept
corruption), and it is the network kept. "no pre-training" probes a freshly initialised encoder;
"bag of words" is a logistic regression on the words of premise and hypothesis (no encoder).

Downstream (``minilm.experiments.electra_common``): a frozen-encoder linear probe on the
three-class entailment task (``minilm.data.entailment_dataset``; chance 33%), reading
[h_CLS ; mean h] of the network the paper would fine-tune. A probe, because the sentiment task
saturates (random encoders fine-tuned on it reach 100%; its words are not in the pre-training
corpus either), and because fine-tuning teaches every encoder, the random one too: in a first
check, 100 fine-tuning steps on 64-200 entailment pairs put a pre-trained ELECTRA 15 points above
a random encoder, the probe 35 points.

Metrics: **entailment probe accuracy** (the "GLUE score" of the miniature); **replaced-token AUC**
on every held-out token (ELECTRA, ELECTRA 15%: does the discriminator tell replaced tokens from
originals? 0.5 = no; ELECTRA 15% only ever learns on the masked 15%, so over all tokens it sits
near 0.5) and on the masked positions only (where both are trained: the fair comparison of the two
detectors); **generator MLM accuracy** on held-out masked tokens (for "BERT (MLM)" that is the
model itself).
"""
from __future__ import annotations

from minilm.experiments import Metric, Plan, config_of, settings_of
from minilm.experiments.claims import Beats
from minilm.experiments import electra_common as common

NAME = "electra-ablation"
HELP = "ELECTRA vs All-tokens MLM, Replace MLM, ELECTRA-15% and BERT at equal compute (Clark et al. Table 5)"

# condition -> (recipe overrides, the network that is probed); None = not pre-trained
CONDITIONS = {
    "ELECTRA": ({"objective": "electra"}, "discriminator"),
    "All-tokens MLM": ({"objective": "all_tokens_mlm"}, "discriminator"),
    "Replace MLM": ({"objective": "replace_mlm"}, "discriminator"),
    "ELECTRA 15%": ({"objective": "electra15"}, "discriminator"),
    "BERT (MLM)": ({"objective": "electra", "generator_hidden_fraction": 1.0, "disc_weight": 0.0}, "generator"),
    "no pre-training": None,
    "bag of words": None,
}
PAPER_GLUE = {"ELECTRA": 85.0, "All-tokens MLM": 84.3, "Replace MLM": 82.4, "ELECTRA 15%": 82.4, "BERT (MLM)": 82.2}

CLAIMS = [
    Beats("ELECTRA's discriminator gives better features than every other objective at equal compute (Clark et al. "
          "2020, Table 5: 85.0 against 82.2-84.3).", "probe",
          above=("ELECTRA",), below=("All-tokens MLM", "Replace MLM", "ELECTRA 15%", "BERT (MLM)")),
    Beats("Learning from every token closes most of the gap: All-Tokens MLM beats BERT (84.3 vs 82.2).", "probe",
          above=("All-tokens MLM",), below=("BERT (MLM)",)),
    Beats("Removing the [MASK] mismatch, or judging only the masked 15%, helps less: Replace MLM and ELECTRA 15% "
          "each beat BERT by a little (82.4 vs 82.2).", "probe",
          above=("Replace MLM", "ELECTRA 15%"), below=("BERT (MLM)",)),
]

CONFIG = common.ElectraExperimentConfig   # the recipe's config (its generator's size too) and the probe's data
OPTIONS = ("corpus", "task_text", "steps", "lr", "probe_train")


def plan(cfg: common.ElectraExperimentConfig) -> Plan:
    s = settings_of(cfg)
    return Plan(
        title="which pre-training objective gives the best encoder at equal compute?",
        conditions=list(CONDITIONS),
        metrics=[Metric("probe", "entailment probe accuracy"),
                 Metric("disc_auc", "replaced-token AUC", percent=False),
                 Metric("disc_auc_masked", "AUC, masked positions", percent=False),
                 Metric("generator_mlm", "generator MLM accuracy")],
        settings=s,
        notes=["Paper (Clark et al. 2020, Table 5, GLUE dev): ELECTRA 85.0, All-tokens MLM 84.3, Replace MLM 82.4, "
               "ELECTRA 15% 82.4, BERT 82.2.",
               f"Entailment: 3 classes (chance 33.3%); a linear probe on the frozen encoder, {s['probe_train']} "
               f"training pairs, {s['probe_test']} test pairs. The AUC exists only for models with a "
               "replaced-token detector (ELECTRA, ELECTRA 15%). It is measured over every held-out token; "
               "ELECTRA 15% is trained on the masked 15% only, so its output elsewhere is untrained and "
               "its AUC stays near 0.5; the next column compares the two on the masked positions."]
        + [common.text_note(cfg)] + common.caveats(s),
        claims=CLAIMS)


def run_one(condition: str, seed: int, settings: dict) -> dict:
    if condition == "bag of words":
        return {"probe": common.bag_of_words_accuracy(seed, settings)}
    spec = CONDITIONS[condition]
    recipe_cfg = config_of(CONFIG, settings).recipe
    if spec is None:  # no pre-training: a freshly initialised ELECTRA discriminator, same tokenizer
        recipe, _ = common.pretrain(recipe_cfg, seed, steps=0, task_text=settings["task_text"])
        encode, _ = common.encoder_of(recipe.model, "discriminator")
        return {"probe": common.entailment_probe(encode, recipe.tokenizer, seed, settings)}
    overrides, network = spec
    recipe, metrics = common.pretrain(recipe_cfg, seed, task_text=settings["task_text"], **overrides)
    encode, _ = common.encoder_of(recipe.model, network)
    out = {"probe": common.entailment_probe(encode, recipe.tokenizer, seed, settings),
           **common.pretraining_metrics(metrics)}
    if network == "generator":  # λ = 0: the discriminator never trained, its AUCs mean nothing
        out.pop("disc_auc", None)
        out.pop("disc_auc_masked", None)
    return out
