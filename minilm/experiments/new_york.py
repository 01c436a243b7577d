"""Multi-token names masked together: independent (BERT) vs factorised (XLNet) prediction.

Yang et al. 2019 (XLNet), §2.6, on "New York is a city" with both name tokens masked: BERT's
objective is log p(New | is a city) + log p(York | is a city) — the two are predicted
independently — while XLNet, with the order [is, a, city, New, York], has
log p(New | is a city) + log p(York | New, is a city): the second token can depend on the first,
"a dependency BERT cannot learn".

The miniature: the synthetic corpus writes names of two or three words (new york, new delhi,
new orleans, los angeles, las vegas, san francisco, san diego, hong kong, buenos aires,
rio de janeiro; one WordPiece token per word) in sentences such as "the dog from NAME runs .".
A name is drawn at random for each sentence, so NO context tells WHICH name it is: exact names
are capped near the most frequent name's share (about 10%, the reference row), and the part a
model can get right is the inside of a name: after "new" comes york, delhi or orleans, never
angeles. Probes: the names in fresh synthetic documents (up to 600), a window of 16 tokens
around each, the whole name hidden, predicted greedily (minilm/models/xlnet_predict.py). Every
model is pre-trained on the same 400-document corpus (same WordPiece vocabulary of 400) for
--steps steps of 32 sequences, 2 layers, width 64.

Rows:
  most frequent name (no model)  always the training corpus's most frequent name
  BERT (MLM+NSP, independent)    minilm/recipes/bert.py (pairs of 32 tokens, 15% masked); the
                                 probe window behind [CLS], the name [MASK]ed, every token the
                                 argmax of its own softmax
  XLNet, independent             one XLNet (minilm/recipes/xlnet.py, --K 2) predicting every
                                 name token from the context alone (BERT's assumption)
  XLNet, factorised L->R         the same model: p(new) then p(york | new), each step greedy
  XLNet, factorised R->L         the same model: p(york) then p(new | york)

(K = 2, half of every 16-token window predicted, because at XLNet's K = 6 two adjacent targets
are rare and the name probe stays near 0; the XLNet is trained once per seed and reused by its
three rows.) A three-word name (rio de janeiro, about a tenth of the probes) is "real" only if
all three words are.

Metrics: exact names (every token of the name right), name tokens (per-token accuracy), and
real names (the predicted tokens spell SOME name of the corpus — "new york" for "new delhi" is
wrong but real, "new angeles" is not).
"""
from __future__ import annotations

import json
import tempfile
from collections import Counter
from dataclasses import dataclass, replace

import numpy as np

from minilm.experiments import Metric, Plan, settings_of
from minilm.experiments.claims import Beats, applicable
from minilm.recipes.config import override

NAME = "new-york"
HELP = "multi-token names: BERT's independent vs XLNet's factorised prediction"

REFERENCE = "most frequent name (no model)"
BERT = "BERT (MLM+NSP, independent)"
XLNET_ORDERS = {"XLNet, independent": "independent",
                "XLNet, factorised L->R": "left_to_right",
                "XLNet, factorised R->L": "right_to_left"}
CONDITIONS = [REFERENCE, BERT, *XLNET_ORDERS]
CLAIMS = [
    Beats("Predicting a name's tokens one after the other (XLNet's factorisation) learns the dependency between "
          "them that independent prediction (BERT) cannot: p(York | New, is a city) (Yang et al. 2019, §2.6).",
          "coherent_rate", above=("XLNet, factorised L->R", "XLNet, factorised R->L"),
          below=(BERT, "XLNet, independent")),
    Beats("So it gets more whole names right.", "joint_accuracy",
          above=("XLNet, factorised L->R", "XLNet, factorised R->L"), below=(BERT, "XLNet, independent")),
]

_CACHE: dict = {}   # (seed, settings) -> trained XLNet recipe; its three rows share one training run


@dataclass(frozen=True)
class NewYorkConfig:
    """``minilm experiment new-york``: every model's sizes and the probes. ``quick()``: fewer steps and probes."""
    docs: int = 400                 # synthetic pre-training documents
    steps: int = 2000               # pre-training steps of each model
    K: float = 2.0                  # XLNet's partial prediction 1/K
    block_size: int = 16            # XLNet's sequence length, and the probes' window
    bert_max_seq_length: int = 32   # BERT's sequence length (a pair of segments)
    n_layer: int = 2                # blocks of every model
    n_head: int = 4                 # attention heads
    n_embd: int = 64                # width
    batch_size: int = 32            # sequences per step
    vocab_size: int = 400           # WordPiece vocabulary
    probe_docs: int = 400           # fresh documents the name probes come from
    max_probes: int = 600           # at most this many probes
    no_bert: bool = False           # leave out the BERT row (saves a third of the time)

    @classmethod
    def quick(cls):
        return replace(cls(), steps=200, probe_docs=120, max_probes=200)


CONFIG = NewYorkConfig
OPTIONS = ("steps", "K", "no_bert")
# Counted: the 400 synthetic documents of seeds 0-2 (load_documents), and pairs of capitalised words
# in read_corpus("real").
NO_CORPUS = ("Its probes are the synthetic corpus's ten multi-word names (new york, los angeles, rio de janeiro, ...): "
             "400 synthetic documents (85-89 KB) write them about 600 times, 48 to 77 times each. The English text "
             "minilm ships has too few: its most frequent two-word names occur 10 to 32 times in 1.3 MB (Jargon File "
             "32, Bell Labs 20, Palo Alto 15, San Francisco 10), a hundredth of that density, too few to learn a "
             "name's second word from its first, or to probe it.")


def plan(cfg: NewYorkConfig) -> Plan:
    settings = {k: v for k, v in settings_of(cfg).items() if k != "no_bert"}  # the rows shown, not a run's setting
    conditions = [c for c in CONDITIONS if not (c == BERT and cfg.no_bert)]
    return Plan(
        title="is a masked multi-token name predicted better one token at a time?",
        conditions=conditions,
        metrics=[Metric("joint_accuracy", "exact names"), Metric("coherent_rate", "real names"),
                 Metric("token_accuracy", "name tokens")],
        settings=settings,
        notes=["Names are drawn at random in the corpus, so no context tells which one: exact names are capped "
               "near the most frequent name's share; 'real names' (the prediction spells some name of the "
               "corpus) is where predicting one token after the other shows.",
               "Yang et al. 2019, §2.6: BERT predicts 'New' and 'York' independently; XLNet's factorisation "
               "gives p(York | New, context). The paper's example is worked by hand: it reports no dev or test "
               "number for it, so the claims here are directions only."],
        claims=applicable(CLAIMS, conditions))


def _recipe_config(recipe_class, settings: dict, seed: int, **extra):
    """A recipe's defaults with this experiment's sizes."""
    sizes = {key: settings[key] for key in ("docs", "n_layer", "n_head", "n_embd", "batch_size", "vocab_size")}
    return override(recipe_class.Config(), seed=seed, **sizes, **extra)


def _train(recipe, settings: dict, seed: int):
    from minilm.train import TrainConfig, train
    lr = recipe.Config().train.lr  # the recipe's default peak learning rate
    steps = settings["steps"]
    cfg = TrainConfig(steps=steps, lr=lr, warmup=max(1, steps // 10), eval_every=steps, checkpoint_every=steps,
                      seed=seed)
    with tempfile.TemporaryDirectory() as out:
        train(recipe, cfg, out, progress=False, plot=False)
    return recipe.model


def probes_for(tokenizer, settings: dict, seed: int) -> dict:
    """Name probes (``xlnet_predict.name_probes``) in fresh synthetic documents, not the training text."""
    from minilm.data import synthetic_corpus
    from minilm.models.xlnet_predict import name_probes
    from minilm.recipes.common import stream
    docs = synthetic_corpus(settings["probe_docs"], rng=np.random.default_rng([seed, 4242]))
    return name_probes(stream(docs, tokenizer), tokenizer, block_size=settings["block_size"],
                       max_probes=settings["max_probes"])


def most_frequent_name(train_ids, tokenizer, names=None) -> tuple[int, ...]:
    """The name (a tuple of ids) that occurs most often in the token stream ``train_ids``."""
    from minilm.models.xlnet_predict import name_probes
    found = name_probes(train_ids, tokenizer, block_size=8, names=names)
    counts = Counter(tuple(row[m].tolist()) for row, m in zip(found["input_ids"], found["is_target"]))
    return max(sorted(counts), key=lambda n: counts[n])


def fill_names(probes: dict, name: tuple) -> np.ndarray:
    """The probes with every hidden name replaced by ``name`` (cut or padded with its last id to fit)."""
    out = probes["input_ids"].copy()
    for r, span in enumerate(probes["is_target"]):
        k = int(span.sum())
        out[r, span] = (list(name) + [name[-1]] * k)[:k]
    return out


def bert_predict(model, tokenizer, probes: dict) -> np.ndarray:
    """BERT's guess: [CLS] + window with every name token [MASK]ed; each its own argmax. (N, T)."""
    from autograd import no_grad
    ids, is_target = probes["input_ids"], probes["is_target"]
    N, T = ids.shape
    x = np.concatenate([np.full((N, 1), tokenizer.cls_id), np.where(is_target, tokenizer.mask_id, ids)], axis=1)
    model.eval()
    with no_grad():
        logits = model(x, np.zeros_like(x), np.ones_like(x))["mlm_logits"].data    # (N, T + 1, V)
    guess = logits[:, 1:].argmax(-1)                                               # (N, T)
    return np.where(is_target, guess, ids)


def _xlnet(seed: int, settings: dict):
    from minilm.recipes import xlnet
    key = (seed, json.dumps(settings, sort_keys=True))
    if key not in _CACHE:
        _CACHE.clear()                                     # keep one model: the runner goes seed by seed
        recipe = xlnet.XLNetRecipe(_recipe_config(xlnet.XLNetRecipe, settings, seed, K=settings["K"], block_size=settings["block_size"],
                                            name_probes=0))
        _train(recipe, settings, seed)
        _CACHE[key] = recipe
    return _CACHE[key]


def run_one(condition: str, seed: int, settings: dict) -> dict:
    from minilm.models.xlnet_predict import predict_in_order, score_name_predictions
    if condition in XLNET_ORDERS:
        recipe = _xlnet(seed, settings)
        probes = probes_for(recipe.tokenizer, settings, seed)
        predicted = predict_in_order(recipe.model, probes["input_ids"], probes["is_target"],
                                     order=XLNET_ORDERS[condition])
    elif condition == BERT:
        from minilm.recipes import bert
        recipe = bert.BertRecipe(_recipe_config(bert.BertRecipe, settings, seed, max_seq_length=settings["bert_max_seq_length"]))
        probes = probes_for(recipe.tokenizer, settings, seed)
        predicted = bert_predict(_train(recipe, settings, seed), recipe.tokenizer, probes)
    elif condition == REFERENCE:                     # the recipes' corpus and tokenizer, no model
        from minilm.recipes.common import load_documents, stream, texts
        from minilm.tokenizers import WordPieceTokenizer
        from minilm.recipes import xlnet
        train_docs, _ = load_documents(_recipe_config(xlnet.XLNetRecipe, settings, seed))
        tok = WordPieceTokenizer.train(texts(train_docs), settings["vocab_size"])
        probes = probes_for(tok, settings, seed)
        predicted = fill_names(probes, most_frequent_name(stream(train_docs, tok), tok))
    else:
        raise ValueError(f"new-york: unknown condition {condition!r}")
    scores = score_name_predictions(predicted, probes)
    return {k: float(v) for k, v in scores.items()}
