"""What each family's corruption does to one sentence, as a table of coloured tokens
(``minilm plot corruption``).

Every row runs the library's own function (``minilm.corruption``) on the same text:

* BERT ``mask_tokens`` (Devlin et al. 2019, §3.1): 15% of the tokens are predicted; of those 80%
  become [MASK], 10% a random token, 10% stay as they are.
* RoBERTa ``roberta_mask`` (Liu et al. 2019, §4.1): the same 80/10/10, fairseq's way, a new mask
  every time the sequence is read.
* ELECTRA ``electra_mask`` + a generator's samples (Clark et al. 2020, §2): the discriminator sees
  the samples and labels every token original / replaced. Without a checkpoint the "generator"
  samples uniformly from the vocabulary, and the figure says so.
* T5 ``span_corruption`` (Raffel et al. 2020, §3.1.4): spans become sentinels in the input; the
  target lists the dropped spans after their sentinels.
* BART (Lewis et al. 2020, §2.2): token masking, token deletion, text infilling, sentence
  permutation and document rotation, each alone. Tokens keep the colour of their sentence, so a
  permutation or rotation shows where each piece went.

A row whose task slot is not implemented yet (a student release) says which task it waits for.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from autograd.errors import MiniLMError
from minilm import corruption as C
from minilm.data import synthetic_corpus
from minilm.plots import _plt, save_png

IGNORE = -100
SPECIALS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "<s>", "</s>", "<mask>")
N_SENTINELS = 8
SENTENCE_COLOURS = ("#dbe9f6", "#fde3c8", "#dcefd9", "#efe0f3", "#fbf3c4", "#e2e2e2")
STYLES = {  # style -> (face colour, text colour, legend text or None)
    "plain": ("#ffffff", "#222222", None),
    "special": ("#f2f2f2", "#777777", "special token"),
    "mask": ("#f5a142", "#000000", "[MASK] / <mask> put in"),
    "random": ("#e0534a", "#ffffff", "a different token put in (random / sampled)"),
    "kept": ("#7cc48a", "#000000", "chosen but left as it was (or sampled = original)"),
    "sentinel": ("#8e6bbf", "#ffffff", "T5 sentinel"),
    "deleted": ("#ffffff", "#c0392b", "deleted (struck out)"),
}


@dataclass
class Vocab:
    """Display strings of the ids, and the ids each corruption needs."""
    tokens: list                    # id -> string; ids >= n_real are display-only (sentinels)
    n_real: int                     # random replacements are drawn below this
    special_ids: list
    nspecial: int                   # RoBERTa draws random ids from [nspecial, n_real)
    ids: dict = field(default_factory=dict)  # role -> id: pad cls sep mask bos eos bart_mask full_stop


def word_vocab(words, *, rng) -> Vocab:
    """A word-level vocabulary: the specials, the sentence's words, some words of the synthetic corpus
    (so that a random replacement looks like one), and T5's sentinels at the top."""
    fillers = {w for doc in synthetic_corpus(3, rng=rng) for s in doc for w in _split(s)}
    body = sorted((set(words) | fillers) - set(SPECIALS))
    tokens = [*SPECIALS, *body]
    index = {t: i for i, t in enumerate(tokens)}
    ids = {"pad": 0, "cls": 2, "sep": 3, "mask": 4, "bos": 5, "eos": 6, "bart_mask": 7,
           "full_stop": index.get(".")}
    return _with_sentinels(Vocab(tokens, len(tokens), list(range(len(SPECIALS))), len(SPECIALS), ids))


def tokenizer_vocab(tok) -> Vocab:
    """The vocabulary of a trained tokenizer (BERT-style specials stand in for BART's <s> </s>)."""
    tokens = [tok.id_to_token(i) for i in range(tok.vocab_size)]
    vocab = tok.get_vocab()
    ids = {"pad": tok.pad_id, "cls": tok.cls_id, "sep": tok.sep_id, "mask": tok.mask_id,
           "bos": tok.cls_id, "eos": tok.sep_id, "bart_mask": tok.mask_id, "full_stop": vocab.get(".")}
    specials = list(tok.special_ids)
    return _with_sentinels(Vocab(tokens, len(tokens), specials, max(specials) + 1, ids))


def _with_sentinels(v: Vocab) -> Vocab:
    V = v.n_real + N_SENTINELS
    sentinels = C.t5_sentinel_ids(V, N_SENTINELS)         # (n,) V-1, V-2, ...: <extra_id_0> is on top
    v.tokens = v.tokens + [""] * N_SENTINELS
    for k, i in enumerate(sentinels):
        v.tokens[i] = f"<extra_id_{k}>"
    v.ids["sentinels"] = sentinels
    return v


def _split(text: str) -> list[str]:
    return re.findall(r"\w+|[^\w\s]", text.lower())


def _row(label, tokens, styles, boxed=None, *, colours=None, note=""):
    return {"label": label, "tokens": list(tokens), "styles": list(styles),
            "boxed": list(boxed) if boxed is not None else [False] * len(tokens),
            "colours": colours, "note": note}


def _masked_row(label, v: Vocab, original, inputs, predicted, mask_id):
    styles = []
    for o, x, p in zip(original, inputs, predicted):
        if int(o) in v.special_ids and not p:
            styles.append("special")
        elif not p:
            styles.append("plain")
        else:
            styles.append("mask" if x == mask_id else "kept" if x == o else "random")
    return _row(label, [v.tokens[i] for i in inputs], styles, predicted)


def _sentences(ids, full_stop) -> np.ndarray:
    """Sentence number of each position (specials at the ends get -1)."""
    ends = np.cumsum(np.asarray(ids) == full_stop) if full_stop is not None else np.zeros(len(ids), int)
    sent = np.concatenate([[0], ends[:-1]])                 # a full stop belongs to its sentence
    sent[0] = sent[-1] = -1
    return sent


def _origin_colours(origin, sent):
    return [None if o is None or sent[o] < 0 else SENTENCE_COLOURS[sent[o] % len(SENTENCE_COLOURS)]
            for o in origin]


def _origin_styles(origin, sent):
    return ["special" if o is not None and sent[o] < 0 else "plain" for o in origin]


def _align_sentences(inp, out, full_stop):
    """For a rearrangement of whole sentences (or a rotation): the input position of each output token."""
    L = len(inp)
    for offset in range(1, L - 1):                          # a rotation of the inside?
        order = [0, *range(offset, L - 1), *range(1, offset), L - 1]
        if np.array_equal(inp[order], out):
            return order
    origin, used = [], set()                                # else: match sentences by content
    s_in, s_out = _sentences(inp, full_stop), _sentences(out, full_stop)
    spans_in = {k: np.flatnonzero(s_in == k) for k in set(s_in.tolist()) - {-1}}
    for k in sorted(set(s_out.tolist()) - {-1}):
        piece = out[s_out == k]
        match = next((j for j, pos in spans_in.items() if j not in used and np.array_equal(inp[pos], piece)), None)
        used.add(match)
        origin += list(spans_in[match]) if match is not None else [None] * len(piece)  # not a whole sentence
    origin = [0, *origin, L - 1]
    return origin if len(origin) == len(out) else [None] * len(out)


@dataclass
class _Example:
    """The text of the figure in the forms the row builders below read."""
    v: Vocab
    words: np.ndarray               # (n,) the text's ids
    bert: np.ndarray                # [CLS] w… [SEP]
    bart: np.ndarray                # <s> w… </s> (RoBERTa reads this form too)
    sent: np.ndarray                # the sentence of each token of ``bart`` (< 0 on specials)
    rng: np.random.Generator
    generator: object = None        # ELECTRA's generator, ids (T,) -> logits (T, V); None = uniform
    generator_name: str = ""

    @property
    def r(self) -> dict:
        return self.v.ids

    def tokens(self, ids) -> list:
        return [self.v.tokens[i] for i in ids]


def corruption_rows(text: str, *, rng: np.random.Generator, tokenizer=None, generator=None,
                    generator_name: str = "") -> list[dict]:
    """The rows of the figure for ``text``; ``generator(ids (T,)) -> logits (T, V)`` is ELECTRA's
    generator (None: uniform samples)."""
    v = tokenizer_vocab(tokenizer) if tokenizer is not None else word_vocab(_split(text), rng=rng)
    r = v.ids
    words = (np.asarray(tokenizer.encode(text), dtype=np.int64) if tokenizer is not None else
             np.asarray([v.tokens.index(w) for w in _split(text)], dtype=np.int64))
    if words.size < 2:
        raise MiniLMError(f"plot corruption: the text {text!r} gives {words.size} token(s); give a sentence")
    bert = np.concatenate([[r["cls"]], words, [r["sep"]]])          # [CLS] w… [SEP]
    bart = np.concatenate([[r["bos"]], words, [r["eos"]]])          # <s> w… </s>
    ex = _Example(v, words, bert, bart, _sentences(bart, r["full_stop"]), rng, generator, generator_name)
    rows = [_row("input\nin BERT's form", ex.tokens(bert),
                 ["special" if int(i) in v.special_ids else "plain" for i in bert])]
    for make in ROW_BUILDERS:  # in this order: each draws from ``rng`` in turn
        rows += _attempt(make, ex)
    return rows


def _attempt(make, ex: _Example) -> list[dict]:
    """``make(ex)``'s rows, or one row saying which slot is still a stub (its docstring names it)."""
    try:
        return make(ex)
    except NotImplementedError as e:
        return [_row(make.__doc__, [], [], note=f"not implemented yet: {e}")]


def _bert_rows(ex: _Example) -> list[dict]:
    """BERT  mask_tokens"""
    v, r = ex.v, ex.r
    x, labels = C.mask_tokens(ex.bert, mask_id=r["mask"], vocab_size=v.n_real, special_ids=v.special_ids,
                              rng=ex.rng)
    return [_masked_row("BERT  mask_tokens\n15%: 80% [MASK] / 10% random / 10% kept", v, ex.bert, x,
                        labels != IGNORE, r["mask"])]


def _roberta_rows(ex: _Example) -> list[dict]:
    """RoBERTa  roberta_mask"""
    v, r = ex.v, ex.r
    x, targets = C.roberta_mask(ex.bart, mask_id=r["bart_mask"], vocab_size=v.n_real, nspecial=v.nspecial,
                                pad_id=r["pad"], rng=ex.rng)          # RoBERTa reads <s> w… </s> too
    return [_masked_row("RoBERTa  roberta_mask\n(new mask every epoch)", v, ex.bart, x,
                        targets != r["pad"], r["bart_mask"])]


def _electra_rows(ex: _Example) -> list[dict]:
    """ELECTRA  electra_mask + generator"""
    v, r, bert = ex.v, ex.r, ex.bert
    x, masked, _ = C.electra_mask(bert, mask_id=r["mask"], special_ids=v.special_ids, pad_id=r["pad"],
                                  rng=ex.rng)
    if ex.generator is None:
        logits = np.zeros((len(bert), v.n_real))
        logits[:, v.special_ids] = -1e9                 # a uniform generator over the words
    else:
        logits = np.asarray(ex.generator(x), dtype=np.float64)
    samples = C.sample_from_logits(logits, rng=ex.rng)  # (T,)
    corrupted = C.electra_corrupt(bert, masked, samples)
    gen = _masked_row("ELECTRA  electra_mask\n(generator input: 85% [MASK])", v, bert, x, masked, r["mask"])
    who = ex.generator_name or "uniform random samples, no checkpoint given"
    disc = _masked_row(f"ELECTRA  discriminator input\ngenerator: {who}", v, bert, corrupted, masked,
                       r["mask"])
    disc["boxed"] = [False] * len(bert)
    return [gen, disc]


def _t5_rows(ex: _Example) -> list[dict]:
    """T5  span_corruption"""
    r = ex.r
    inputs, targets = C.span_corruption(ex.words, sentinel_ids=r["sentinels"], eos_id=r["eos"], rng=ex.rng)
    sentinel = set(r["sentinels"].tolist())

    def style(ids):
        return ["sentinel" if int(i) in sentinel else "special" if i == r["eos"] else "plain" for i in ids]

    return [_row("T5  span_corruption: input\n15% of tokens, mean span 3", ex.tokens(inputs), style(inputs)),
            _row("T5  span_corruption: target\neach sentinel, then the span it hid", ex.tokens(targets),
                 style(targets))]


def _bart_input(ex: _Example) -> list[dict]:
    """BART  input"""
    return [_row("BART  input\n(colour = sentence)", ex.tokens(ex.bart),
                 ["special" if s < 0 else "plain" for s in ex.sent],
                 colours=_origin_colours(range(len(ex.bart)), ex.sent))]


def _bart_masking(ex: _Example) -> list[dict]:
    """BART  token masking"""
    r, bart, sent = ex.r, ex.bart, ex.sent
    out = C.token_masking(bart, mask_id=r["bart_mask"], rng=ex.rng)
    return [_row("BART  token masking\n15% of the words become <mask>", ex.tokens(out),
                 ["mask" if o != i and o == r["bart_mask"] else "special" if s < 0 else "plain"
                  for o, i, s in zip(out, bart, sent)], colours=_origin_colours(range(len(bart)), sent))]


def _bart_deletion(ex: _Example) -> list[dict]:
    """BART  token deletion"""
    bart, sent = ex.bart, ex.sent
    out, j, styles = C.token_deletion(bart, rng=ex.rng), 0, []
    for i, tok in enumerate(bart):                      # out is a subsequence of the input
        kept = j < len(out) and out[j] == tok
        j += kept
        styles.append(("special" if sent[i] < 0 else "plain") if kept else "deleted")
    return [_row("BART  token deletion\n15% of the words removed", ex.tokens(bart), styles,
                 colours=_origin_colours(range(len(bart)), sent))]


def _bart_infilling(ex: _Example) -> list[dict]:
    """BART  text infilling"""
    r, bart = ex.r, ex.bart
    out = C.text_infilling(bart, mask_id=r["bart_mask"], rng=ex.rng)
    origin, j = [], 0
    for tok in out:                                     # the kept tokens, in order, greedily
        while tok != r["bart_mask"] and j < len(bart) and bart[j] != tok:
            j += 1
        origin.append(None if tok == r["bart_mask"] or j == len(bart) else j)
        j += origin[-1] is not None
    return [_row("BART  text infilling\n30%: one <mask> per span, Poisson(3) lengths", ex.tokens(out),
                 ["mask" if o == r["bart_mask"] else "special" if o in (r["bos"], r["eos"]) else "plain"
                  for o in out], colours=_origin_colours(origin, ex.sent))]


def _bart_permutation(ex: _Example) -> list[dict]:
    """BART  sentence permutation"""
    r = ex.r
    if r["full_stop"] is None:
        return [_row("BART  sentence permutation", [], [], note="no '.' in the vocabulary")]
    out = C.sentence_permutation(ex.bart, full_stop_id=r["full_stop"], rng=ex.rng)
    origin = _align_sentences(ex.bart, out, r["full_stop"])
    return [_row("BART  sentence permutation\nthe sentences shuffled", ex.tokens(out),
                 _origin_styles(origin, ex.sent), colours=_origin_colours(origin, ex.sent))]


def _bart_rotation(ex: _Example) -> list[dict]:
    """BART  document rotation"""
    out = C.document_rotation(ex.bart, rng=ex.rng)
    origin = _align_sentences(ex.bart, out, ex.r["full_stop"])
    return [_row("BART  document rotation\nstarts at a random token", ex.tokens(out),
                 _origin_styles(origin, ex.sent), colours=_origin_colours(origin, ex.sent),
                 boxed=[k == 1 for k in range(len(out))])]


ROW_BUILDERS = (_bert_rows, _roberta_rows, _electra_rows, _t5_rows, _bart_input, _bart_masking, _bart_deletion,
                _bart_infilling, _bart_permutation, _bart_rotation)


def corruption_figure(rows, path, *, title: str = "") -> Path:
    """Draw the rows of :func:`corruption_rows` as a table of token boxes; returns the PNG's path."""
    plt = _plt()
    from matplotlib.patches import FancyBboxPatch, Patch  # matplotlib loads only to draw (plots/__init__.py)
    char_w, gap = 1.0, 0.6                                  # widths in characters of the mono font
    widths = [[max(len(t), 1) * char_w + 1.0 for t in row["tokens"]] for row in rows]
    span = max([sum(w) + gap * len(w) for w in widths] + [40])
    fig_w = min(26.0, 3.4 + 0.092 * span)
    fig, ax = plt.subplots(figsize=(fig_w, 0.5 + 0.52 * len(rows) + 0.9))
    for y, (row, ws) in enumerate(zip(rows, widths)):
        head, _, sub = row["label"].partition("\n")
        ax.text(-1.2, y - (0.14 if sub else 0), head, ha="right", va="center", fontsize=9, fontweight="bold")
        if sub:
            ax.text(-1.2, y + 0.2, sub, ha="right", va="center", fontsize=7.5, color="#555555")
        if row["note"]:
            ax.text(0, y, row["note"], ha="left", va="center", fontsize=8.5, color="#a03030", style="italic")
        x = 0.0
        for tok, w, style, boxed, k in zip(row["tokens"], ws, row["styles"], row["boxed"], range(len(ws))):
            face, ink, _ = STYLES[style]
            if row["colours"] and row["colours"][k] and style in ("plain", "special"):
                face = row["colours"][k]
            ax.add_patch(FancyBboxPatch((x, y - 0.32), w, 0.64, boxstyle="round,pad=0,rounding_size=0.25",
                                        facecolor=face, edgecolor="#222222" if boxed else "#b0b0b0",
                                        linewidth=1.8 if boxed else 0.6))
            t = ax.text(x + w / 2, y, tok, ha="center", va="center", fontsize=8.5, family="monospace",
                        color=ink)
            if style == "deleted":
                ax.plot([x + 0.3, x + w - 0.3], [y, y], color=ink, linewidth=1.2)
                t.set_alpha(0.8)
            x += w + gap
    ax.set_xlim(-0.5, span)
    ax.set_ylim(len(rows) - 0.5, -0.6)
    ax.axis("off")
    handles = [Patch(facecolor=f, edgecolor="#b0b0b0", label=lab) for f, _, lab in STYLES.values() if lab]
    handles.append(Patch(facecolor="white", edgecolor="#222222", linewidth=1.8,
                         label="thick border: a prediction target (rotation: the new start)"))
    fig.legend(handles=handles, loc="lower center", ncol=3, frameon=False, fontsize=8)
    if title:
        fig.suptitle(title, fontsize=11)
    fig.subplots_adjust(left=min(0.35, 2.9 / fig_w), right=0.99, top=0.93 if title else 0.98,
                        bottom=1.0 / (0.5 + 0.52 * len(rows) + 0.9))
    fills = [c for face, ink, _ in STYLES.values() for c in (face, ink)]
    return save_png(fig, path, keep=[*fills, *SENTENCE_COLOURS, "#222222", "#b0b0b0", "#555555", "#a03030"])
