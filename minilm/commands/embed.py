"""``minilm embed``: embeddings from a trained model.

* ``minilm embed --static [--checkpoint CKPT]``: static word vectors per layer and subword pooling
  (Task 11.1, ``minilm/downstream/static.py``), scored on the synthetic word-similarity pairs; a Markdown
  table on stdout and a PNG plot (``--out``). Without a checkpoint a small BERT is pre-trained first.
* ``minilm embed --static DIR``: the same on a Hugging Face encoder folder — BERT (e.g.
  all-MiniLM-L6-v2), RoBERTa, DistilBERT, ELECTRA, DeBERTa — with its own tokenizer
  (``minilm/pretrained/static_words.py``); a BERT folder is followed by the cosine
  between ``pooler_output`` and h[CLS] on a few sentences (docs/pretrained.md). ``--words english`` scores
  rarer English words of several WordPieces instead, where the subword pooling f matters.
* ``minilm embed DIR TEXT...``: sentence embeddings from a pretrained BERT folder (its tokenizer from
  ``vocab.txt``, else ``tokenizer.json``, which is all transformers 5 saves), the recipe of
  sentence-transformers for all-MiniLM-L6-v2 (``minilm/pretrained/sentence.py``): mean of the last
  hidden states over the real tokens, scaled to unit length, so cosine similarity is a dot product,
  which the text output prints for every pair. ``--json`` prints ``{"tokens": [[...], ...],
  "embeddings": [[...], ...]}``: each text's tokens with [CLS]/[SEP] and without [PAD], and its
  embedding.
"""
import json
import sys
from pathlib import Path

from autograd.errors import ConfigError, MiniLMError
from minilm.cli import add_common

ORDER = 40

DESCRIPTION = """\
minilm embed DIR TEXT...: sentence embeddings from a Hugging Face BERT folder (e.g.
all-MiniLM-L6-v2) as sentence-transformers makes them: mean pooling over the attention mask, then L2
normalisation. minilm embed --static: static word vectors (Bommasani et al. 2020), decontextualised
and aggregated, per layer 0..L and subword pooling f, scored by the AUC of same-category vs
different-category word pairs, from a BERT trained here or from any encoder folder DIR (bert,
roberta, distilbert, electra, deberta)."""


def register(sub):
    p = sub.add_parser("embed", help="sentence embeddings from a pretrained folder (DIR TEXT...), or static "
                                     "word vectors per layer (--static)", description=DESCRIPTION)
    add_common(p)
    p.add_argument("model_dir", nargs="?", metavar="DIR",
                   help="a pretrained BERT folder (config.json, model.safetensors, vocab.txt or tokenizer.json); "
                        "with --static, "
                        "any encoder folder (bert, roberta, distilbert, electra, deberta) whose static word vectors "
                        "are scored")
    p.add_argument("texts", nargs="*", help="texts to embed with MODEL_DIR")
    p.add_argument("--batch-size", type=int, default=32, help="texts per forward pass (default 32)")
    s = p.add_argument_group("static word vectors (--static)")
    s.add_argument("--static", action="store_true", help="compute and score static word vectors")
    s.add_argument("--checkpoint", type=Path, help="a 'minilm train bert' checkpoint (default: the folder DIR if "
                                                   "given, else pre-train a small BERT now)")
    s.add_argument("--pretrain-steps", type=int, default=300, help="steps when pre-training on the fly (default 300)")
    s.add_argument("--n-layer", type=int, default=4, help="layers when pre-training on the fly (default 4)")
    s.add_argument("--docs", type=int, default=300, help="synthetic documents to pre-train on (default 300)")
    s.add_argument("--sentences", type=int, default=1500,
                   help="corpus sentences for the aggregated vectors (default 1500)")
    s.add_argument("--pairs", type=int, default=400, help="word pairs to score (default 400)")
    s.add_argument("--words", default="synthetic", choices=["synthetic", "english"],
                   help="synthetic: the synthetic categories' words (dog/cat vs dog/singer), aggregated over "
                        "--sentences synthetic sentences (default); english: 30 rarer English words of 2-5 "
                        "WordPieces in a real vocabulary (armadillo, xylophone, ...), all 435 pairs, aggregated "
                        "over 6 neutral template sentences each (for a pretrained DIR)")
    s.add_argument("--pooling", nargs="+", default=["mean", "max", "min", "last"],
                   choices=["mean", "max", "min", "last"], help="subword poolings f (default all four)")
    s.add_argument("--combine", default="mean", choices=["mean", "max", "min"], help="context combination g")
    s.add_argument("--out", type=Path, default=Path("runs/static/static_vectors.png"), help="the PNG plot")
    p.set_defaults(func=run)


def run(args):
    if args.static:
        if args.texts:
            raise ConfigError(f"embed --static: got texts {args.texts[:3]}; --static takes at most one folder DIR "
                              "(minilm embed --static DIR) and scores fixed word pairs, no texts")
        if args.model_dir and args.checkpoint is not None:
            raise ConfigError(f"embed --static: got both a folder ({args.model_dir}) and --checkpoint "
                              f"{args.checkpoint}; expected one model")
        return run_static(args)
    if not args.model_dir:
        raise MiniLMError("embed: give a pretrained model folder and texts (minilm embed DIR TEXT...), "
                          "or --static for static word vectors")
    return run_sentences(args)


def run_sentences(args) -> int:
    import numpy as np
    from minilm.pretrained import load_bert
    if args.batch_size < 1:
        raise ConfigError(f"embed: --batch-size={args.batch_size}, expected >= 1")
    if not args.texts:
        raise ConfigError("embed: give a model folder DIR and at least one TEXT: minilm embed DIR TEXT...")
    bert = load_bert(args.model_dir)
    tokens, emb = bert.embed(args.texts, batch_size=args.batch_size)   # (N, C), unit rows
    if args.json:
        print(json.dumps({"tokens": tokens, "embeddings": emb.astype(float).tolist()}))
        return 0
    print(f"{len(args.texts)} texts → {emb.shape[1]}-dim unit vectors (mean pooling, L2 norm)", file=sys.stderr)
    for text, toks, e in zip(args.texts, tokens, emb):
        print(f"{text!r}: {len(toks)} tokens, [{', '.join(f'{x:.4f}' for x in e[:6])}, …]")
    if len(args.texts) > 1:
        sims = emb @ emb.T                                              # (N, N) cosine similarities
        print("cosine similarity:")
        for row in sims:
            print("  " + " ".join(f"{s:6.3f}" for s in np.atleast_1d(row)))
    return 0


def _bert(args):
    import numpy as np
    from minilm.data import synthetic_corpus
    from minilm.downstream.finetune import pretrain_bert
    from minilm.models.bert import BertConfig
    from minilm.models.bert_heads import BertForPreTraining
    from minilm.tokenizers import WordPieceTokenizer
    if args.model_dir:   # any encoder folder: bert, roberta, distilbert, electra, deberta
        from minilm.pretrained.static_words import load_static_encoder
        pretrained, bert, tok = load_static_encoder(args.model_dir)
        return bert, tok, pretrained
    if args.checkpoint is not None:
        from minilm.checkpoint import load_model
        model, tok, meta = load_model(args.checkpoint)
        bert = getattr(model, "bert", model)
        if type(bert).__name__ != "BertModel" or tok is None:
            raise ConfigError(f"embed: {args.checkpoint} holds a {type(model).__name__} (family "
                              f"{meta.get('family')!r}); expected a BERT checkpoint with its tokenizer")
        return bert, tok, None
    docs = synthetic_corpus(args.docs, rng=np.random.default_rng([args.seed, 2]))
    tok = WordPieceTokenizer.train([s for d in docs for s in d], 400)
    config = BertConfig(vocab_size=tok.vocab_size, max_position_embeddings=48, n_layer=args.n_layer,
                        n_head=4, n_embd=64, dropout=0.0)
    model = BertForPreTraining(config, rng=np.random.default_rng([args.seed, 3]))
    pretrain_bert(model, tok, docs, steps=args.pretrain_steps, batch_size=32, lr=2e-3, max_seq_length=48,
                  seed=args.seed, progress=True)
    return model.bert, tok, None


def run_static(args):
    import numpy as np
    from minilm.data import synthetic_corpus, word_similarity_pairs
    from minilm.downstream.static import markdown_table, plot_report, static_report
    bert, tok, pretrained = _bert(args)
    if args.words == "english":
        from minilm.pretrained.static_words import english_pairs, english_sentences
        sentences, pairs = english_sentences(), english_pairs()
    else:
        docs = synthetic_corpus(max(1, args.sentences // 4), rng=np.random.default_rng([args.seed, 21]))
        sentences = [s for d in docs for s in d][:args.sentences]
        pairs = word_similarity_pairs(rng=np.random.default_rng([args.seed, 22]), n_pairs=args.pairs)
    print(f"static vectors: {bert.config.n_layer + 1} layers x {len(args.pooling)} poolings x 2 modes, "
          f"{len(sentences)} sentences", file=sys.stderr)
    report = static_report(bert, tok, sentences, pairs, poolings=tuple(args.pooling), combine=args.combine)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    report["plot"] = plot_report(report, args.out)
    if pretrained is not None:  # a real BERT has a pooler worth showing (docs/pretrained.md)
        from minilm.pretrained.static_words import pooler_vs_cls
        report["pooler_vs_cls"] = pooler_vs_cls(pretrained)
    if args.json:
        print(json.dumps(report))
    else:
        print(f"AUC of cosine(same category) > cosine(different category), g={args.combine}; "
              f"{report['n_words_seen']}/{report['n_words']} words seen in the corpus (the rest fall back "
              f"to decontextualised)\n")
        print(markdown_table(report, "auc"))
        if "pooler_vs_cls" in report:
            _print_pooler(report["pooler_vs_cls"])
        print(f"\nplot: {report['plot']}", file=sys.stderr)
    return 0


def _print_pooler(r):
    """The pooler demonstration as text: per sentence, cos(pooler_output, h[CLS]) and the norms."""
    print("\npooler_output = tanh(W h[CLS] + b) is not h[CLS] (last layer):\n")
    print("| text | cos(pooler, h[CLS]) | ‖h[CLS]‖ | ‖pooler‖ |")
    print("|---|---|---|---|")
    for t, c, a, b in zip(r["texts"], r["cos_pooler_cls"], r["norm_cls"], r["norm_pooler"]):
        print(f"| {t} | {c:.3f} | {a:.2f} | {b:.2f} |")
    off = r["off_diagonal"]
    print(f"\nmean cosine between different texts: pooler {off['pooler']:.3f}, h[CLS] {off['cls']:.3f}, "
          f"mean pooling {off['mean']:.3f}")
