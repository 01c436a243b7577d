"""Task module 11 on real weights: static word vectors from a Hugging Face BERT folder
(all-MiniLM-L6-v2), and why ``pooler_output`` is not h[CLS].

``minilm embed --static DIR`` runs ``minilm.downstream.static.static_report`` (Bommasani, Davis & Cardie
2020; the slots of Task 11.1) on the encoder of ``load_bert(DIR)`` with the folder's own
WordPiece vocabulary. Any other encoder that ``load_pretrained`` reads — RoBERTa, DistilBERT, the
ELECTRA discriminator or generator, DeBERTa — goes through
:func:`load_static_encoder`: its L + 1 hidden states come from ``minilm.pretrained.inspect.hidden_states``
(transformers' ``output_hidden_states``), and each word is tokenized as it appears inside a
sentence, ``" " + word``: byte-level BPE then gives its ``Ġ`` pieces (``Ġarm adillo``), the ones the
word has in every context but a sentence's first; WordPiece ignores the space. The sequence is
framed by the tokenizer's own specials (``<s> … </s>`` for RoBERTa). The words to score are those of ``minilm.data.word_similarity_pairs``
(dog/cat vs dog/singer: plain English, so a real uncased vocabulary knows them) and the
aggregation corpus is the synthetic corpus's sentences — nothing here needs the network.

Every one of those 40 words is a single WordPiece of the real 30,522-token vocabulary, so the
subword pooling f cannot matter there. ``english_words``/``english_pairs``/``english_sentences``
give a second set where it does: 30 rarer English words in 5 categories, each split into 2–5
pieces (armadillo → arm ##adi ##llo), scored on all 435 pairs, and aggregated over 6 neutral
template sentences per word ("we talked about the armadillo for an hour .") — the same contexts
for every word, so any category signal comes from the word itself, not from its neighbours.

The pooler. BERT's ``pooler_output`` is

    p = tanh(W_p · h_L[CLS] + b_p)                     (C,) from the last layer's [CLS] state

a dense layer Devlin et al. (2019) trained only through the next-sentence-prediction head. It is a
*function* of h_L[CLS], not h_L[CLS] itself: :func:`pooler_vs_cls` measures the cosine between the
two (near 0 for all-MiniLM-L6-v2, whose sentence-transformers fine-tuning used mean pooling and
never trained the pooler). The course notebook's "[CLS] vector" is ``last_hidden_state[:, 0]``.

Letters: N texts, T time, C channels.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from autograd import Tensor
from autograd.errors import CheckpointError, ConfigError

from .files import CONFIG, config_value, read_config
from .sentence import PretrainedBert, l2_normalize, load_bert, mean_pool

__all__ = ["load_static_bert", "load_static_encoder", "EncoderStates", "WordTokenizer", "pooler_vs_cls", "POOLER_TEXTS", "ENGLISH_CATEGORIES", "TEMPLATES",
           "english_words", "english_pairs", "english_sentences"]

# Rarer words that all-MiniLM-L6-v2's (bert-base-uncased) vocabulary splits into 2–5 pieces.
ENGLISH_CATEGORIES = {
    "animal": ("armadillo", "porcupine", "hedgehog", "wombat", "meerkat", "chipmunk"),
    "instrument": ("xylophone", "ukulele", "bassoon", "tambourine", "glockenspiel", "didgeridoo"),
    "vegetable": ("zucchini", "broccoli", "cauliflower", "asparagus", "artichoke", "turnip"),
    "element": ("molybdenum", "tungsten", "chromium", "vanadium", "beryllium", "cadmium"),
    "profession": ("plumber", "electrician", "pharmacist", "veterinarian", "locksmith", "optometrist"),
}
# Contexts that say nothing about the category: the aggregated vector averages the word over them.
TEMPLATES = (
    "i read a long article about the {} yesterday .",
    "she pointed at the {} in the old photograph .",
    "we talked about the {} for an hour .",
    "nobody mentioned the {} at the meeting .",
    "my neighbour asked me about the {} again .",
    "the book has a chapter on the {} .",
)

# A few everyday sentences for the pooler demonstration (two paraphrases, three unrelated).
POOLER_TEXTS = (
    "A man is playing a guitar.",
    "Someone plays an instrument.",
    "The stock market fell sharply today.",
    "A dog runs across the park.",
    "The cat sleeps on the sofa.",
)


def load_static_bert(directory) -> tuple[PretrainedBert, object, object]:
    """``(pretrained, bert, tokenizer)`` for static vectors: the loaded folder, its encoder (a
    ``BertModel`` in eval mode) and its WordPiece tokenizer (``vocab.txt``, else ``tokenizer.json``). A
    folder with neither, or without [CLS]/[SEP]/[PAD] in its vocabulary, is a CheckpointError: static
    vectors need them."""
    if not any((Path(directory) / f).is_file() for f in ("vocab.txt", "tokenizer.json")):   # before the weights
        raise CheckpointError(f"embed --static: {directory} has no vocab.txt or tokenizer.json; static word "
                              "vectors need the folder's tokenizer")
    pretrained = load_bert(directory)
    tok = pretrained.tokenizer
    absent = [name for name, i in (("[CLS]", tok.cls_id), ("[SEP]", tok.sep_id), ("[PAD]", tok.pad_id))
              if i is None]
    if absent:
        raise CheckpointError(f"embed --static: the vocabulary of {directory} has no {', '.join(absent)} "
                              f"(roles found: {tok.roles}); expected a BERT vocabulary")
    return pretrained, pretrained.bert, tok


class WordTokenizer:
    """A checkpoint's tokenizer as the static-vector slots use it: ``encode(word)`` gives the pieces of
    ``" " + word`` (a word inside a sentence), ``cls_id`` / ``sep_id`` the specials that frame a
    sequence (``[CLS]`` / ``[SEP]``, else ``<s>`` / ``</s>``), ``pad_id`` the padding."""

    def __init__(self, tokenizer, directory="the folder"):
        self.inner = tokenizer
        self.cls_id = tokenizer.cls_id if tokenizer.cls_id is not None else getattr(tokenizer, "bos_id", None)
        self.sep_id = tokenizer.sep_id if tokenizer.sep_id is not None else getattr(tokenizer, "eos_id", None)
        self.pad_id = tokenizer.pad_id
        absent = [n for n, i in (("[CLS] or <s>", self.cls_id), ("[SEP] or </s>", self.sep_id),
                                 ("a pad token", self.pad_id)) if i is None]
        if absent:
            raise CheckpointError(f"embed --static: the tokenizer of {directory} has no {', '.join(absent)} "
                                  f"(roles found: {tokenizer.roles}); static vectors frame each word with them")

    def encode(self, text: str, add_special_tokens: bool = False) -> list[int]:
        ids = self.inner.encode(" " + text.strip(), add_special_tokens=False)
        return [self.cls_id, *ids, self.sep_id] if add_special_tokens else ids


class EncoderStates:
    """Any loaded encoder behind the interface ``minilm.downstream.static`` uses (a BertModel's):
    ``enc(ids (B, T), None, mask (B, T), output_hidden_states=True)["hidden_states"]`` → L + 1 × (B, T, C),
    and ``enc.config.n_layer`` / ``max_position_embeddings`` (the usable length: after RoBERTa's
    offset of 2 rows)."""

    def __init__(self, model, probe_ids):
        from .inspect import hidden_states
        self.model, self._states = model, hidden_states
        n_layer = len(hidden_states(model, [probe_ids])) - 1                   # raises for a non-encoder
        cfg = model.config
        usable = cfg.max_position_embeddings - getattr(cfg, "position_offset", 0)
        self.config = type("StaticConfig", (), {"n_layer": n_layer, "max_position_embeddings": usable})()

    def eval(self):
        self.model.eval()
        return self

    def __call__(self, ids, segment_ids=None, attention_mask=None, output_hidden_states=True) -> dict:
        mask = None if attention_mask is None else np.asarray(attention_mask).astype(np.int64)
        return {"hidden_states": [Tensor(h) for h in self._states(self.model, ids, mask)]}


def load_static_encoder(directory) -> tuple[PretrainedBert | None, object, object]:
    """``(pretrained or None, encoder, tokenizer)`` for ``static_report`` from any encoder folder.
    A BERT folder takes :func:`load_static_bert` (``pretrained`` is then its PretrainedBert, for the
    pooler demonstration); every other encoder is wrapped in
    :class:`EncoderStates` and :class:`WordTokenizer`. GPT-2, T5 and BART are a ConfigError."""
    directory = Path(directory)
    kind = config_value(read_config(directory), "model_type", directory / CONFIG, str)
    if kind == "bert":
        return load_static_bert(directory)
    if kind in ("gpt2", "t5", "bart"):
        raise ConfigError(f"embed --static: {directory} is a {kind} (model_type {kind!r}); static word vectors "
                          "need a bidirectional encoder: bert, roberta, distilbert, electra or deberta")
    from .auto import load_pretrained
    model, tok = load_pretrained(directory)
    if tok is None:
        raise CheckpointError(f"embed --static: {directory} has no tokenizer file minilm reads (tokenizer.json, "
                              "vocab.txt, or vocab.json + merges.txt); static word vectors need it")
    words = WordTokenizer(tok, directory)
    try:
        encoder = EncoderStates(model, [words.cls_id, words.sep_id])
    except ConfigError as e:
        raise ConfigError(f"embed --static: {directory} holds a {type(model).__name__} (model_type {kind!r}), whose "
                          f"per-layer states minilm does not expose ({e}); static word vectors run on bert, "
                          "roberta, distilbert, electra and deberta") from None
    return None, encoder, words


def pooler_vs_cls(pretrained: PretrainedBert, texts=POOLER_TEXTS) -> dict:
    """How far ``pooler_output`` is from h_L[CLS] (and both from the mean-pooled embedding).

    Returns lists, one entry per text: ``cos_pooler_cls`` = cos(p, h_L[CLS]), ``cos_pooler_mean`` and
    ``cos_cls_mean`` (against the sentence embedding: mean of h_L over the mask), ``norm_cls`` and
    ``norm_pooler``; and, per vector kind, ``off_diagonal`` = the mean cosine between *different*
    texts (how much every text looks alike: high = anisotropic, useless for similarity)."""
    texts = list(texts)
    if not texts:
        raise CheckpointError("pooler_vs_cls: no texts given")
    out = pretrained.encode(texts)
    cls = out["last_hidden_state"][:, 0]                              # (N, C) h_L[CLS]
    pooler = out["pooler_output"]                                     # (N, C) tanh(W h_L[CLS] + b)
    mean = mean_pool(out["last_hidden_state"], out["attention_mask"])  # (N, C) sentence embedding
    unit = {"pooler": l2_normalize(pooler), "cls": l2_normalize(cls), "mean": l2_normalize(mean)}
    n = len(texts)
    off = ~np.eye(n, dtype=bool)
    return {
        "texts": texts,
        "cos_pooler_cls": (unit["pooler"] * unit["cls"]).sum(-1).tolist(),
        "cos_pooler_mean": (unit["pooler"] * unit["mean"]).sum(-1).tolist(),
        "cos_cls_mean": (unit["cls"] * unit["mean"]).sum(-1).tolist(),
        "norm_cls": np.linalg.norm(cls, axis=-1).tolist(),
        "norm_pooler": np.linalg.norm(pooler, axis=-1).tolist(),
        "off_diagonal": {k: float((u @ u.T)[off].mean()) if n > 1 else float("nan") for k, u in unit.items()},
        "missing_pooler": "pooler." in pretrained.missing,
    }


def english_words() -> list[str]:
    """The 30 words of ``ENGLISH_CATEGORIES``, category by category."""
    return [w for words in ENGLISH_CATEGORIES.values() for w in words]


def english_pairs() -> list[tuple[str, str, int]]:
    """Every pair of distinct words, ``(a, b, same)``: 75 same-category, 360 different."""
    category = {w: c for c, words in ENGLISH_CATEGORIES.items() for w in words}
    words = english_words()
    return [(a, b, int(category[a] == category[b])) for i, a in enumerate(words) for b in words[i + 1:]]


def english_sentences() -> list[str]:
    """Each word in each of the ``TEMPLATES``: 30 × 6 = 180 sentences, template by template."""
    return [t.format(w) for t in TEMPLATES for w in english_words()]
