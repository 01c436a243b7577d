"""``minilm plot FIGURE``: the pictures of the course, as PNG files.

    minilm plot attention CKPT --text "..."   attention maps per layer and head (minilm/plots/attention.py)
    minilm plot masks                         the mask of every objective (minilm/plots/masks.py)
    minilm plot corruption --text "..."       what each corruption does to a text (minilm/plots/corruption.py)
    minilm plot losses RUN_DIR...             several runs' loss curves (minilm/plots/__init__.py)

Each writes one PNG (``--out PATH``; default ``runs/plots/FIGURE.png``) and prints its path on stdout.
The figures run the library's own functions, so with ``--impl exercises`` they show *your* masks
and corruptions; a panel whose task is not done yet says so.
"""
import json
import sys
from pathlib import Path

import numpy as np

from autograd.errors import MiniLMError
from minilm.cli import add_common

ORDER = 40
DEFAULT_TEXT = "cats eat fish. dogs drink water. birds sing songs. cats drink milk."

DESCRIPTION = """\
The pictures of the course. Every figure writes one PNG (--out) and prints its path. The figures
run the library's own functions, so with --impl exercises they show your masks and corruptions."""

FIGURE_DESCRIPTIONS = {  # each figure's --help description
    "attention": """\
Run TEXT through a checkpoint of minilm train (GPT, BERT, ...) and draw every attention head's
probabilities (rows: query tokens, columns: key tokens).""",
    "masks": """\
Causal, padding, prefix LM, XLNet's content and query streams and T5's encoder, decoder and
cross-attention masks, from minilm.blocks and minilm.corruption.xlnet_inputs.""",
    "corruption": """\
BERT, RoBERTa, ELECTRA, T5 and the five BART noising functions applied to TEXT, drawn as
coloured tokens. ELECTRA's generator is uniformly random unless --generator gives a BERT or
ELECTRA checkpoint.""",
    "losses": """\
Read RUN_DIR/history.json (written by minilm train) of each run and draw the training and
held-out losses on one plot.""",
}


def register(sub):
    p = sub.add_parser("plot", help="draw a figure: attention, masks, corruption, losses (PNG)",
                       description=DESCRIPTION)
    figs = p.add_subparsers(dest="figure", metavar="FIGURE", required=True)

    a = figs.add_parser("attention", help="attention maps of a trained model, per layer and head",
                        description=FIGURE_DESCRIPTIONS["attention"])
    a.add_argument("checkpoint", type=Path, help="a checkpoint.npz written by minilm train")
    a.add_argument("--text", default=DEFAULT_TEXT, help=f"the text to read (default {DEFAULT_TEXT!r})")
    a.add_argument("--max-tokens", type=int, default=24, help="cut the text to this many tokens (default 24)")
    _out(a, "attention")
    a.set_defaults(func=run_attention)

    m = figs.add_parser("masks", help="the attention masks of every objective, side by side",
                        description=FIGURE_DESCRIPTIONS["masks"])
    m.add_argument("--length", type=int, default=8, help="sequence length T (default 8)")
    m.add_argument("--prefix", type=int, default=3, help="prefix length of the prefix-LM mask (default 3)")
    _out(m, "masks")
    m.set_defaults(func=run_masks)

    c = figs.add_parser("corruption", help="what each corruption does to one text",
                        description=FIGURE_DESCRIPTIONS["corruption"])
    c.add_argument("--text", default=DEFAULT_TEXT, help=f"the text to corrupt (default {DEFAULT_TEXT!r})")
    c.add_argument("--generator", type=Path, default=None,
                   help="a BERT / ELECTRA checkpoint whose masked LM proposes ELECTRA's replacements "
                        "(its tokenizer is then used for every row)")
    _out(c, "corruption")
    c.set_defaults(func=run_corruption)

    lo = figs.add_parser("losses", help="loss curves of several runs together",
                         description=FIGURE_DESCRIPTIONS["losses"])
    lo.add_argument("runs", nargs="+", type=Path, metavar="RUN_DIR", help="folders written by minilm train")
    lo.add_argument("--title", default="loss per run (faint: every step, bold: moving average, dashed: held out)",
                    help="the figure's title")
    _out(lo, "losses")
    lo.set_defaults(func=run_losses)


def _out(parser, name):
    add_common(parser, json=False)
    parser.add_argument("--out", type=Path, default=Path("runs") / "plots" / f"{name}.png",
                        help=f"the PNG to write (default runs/plots/{name}.png)")


def _done(path) -> int:
    print(path)
    return 0


def run_attention(args):
    from minilm.plots.attention import attention_plot
    return _done(attention_plot(args.checkpoint, args.text, args.out, max_tokens=args.max_tokens))


def run_masks(args):
    from minilm.plots.masks import masks_figure
    return _done(masks_figure(args.out, T=args.length, prefix=args.prefix, rng=np.random.default_rng(args.seed)))


def run_corruption(args):
    from minilm.plots.corruption import corruption_figure, corruption_rows
    tokenizer = generator = None
    name = ""
    if args.generator is not None:
        tokenizer, generator = load_generator(args.generator)
        name = f"the masked LM of {args.generator}"
    rows = corruption_rows(args.text, rng=np.random.default_rng(args.seed), tokenizer=tokenizer,
                           generator=generator, generator_name=name)
    return _done(corruption_figure(rows, args.out, title="What each pre-training corruption does to one text"))


def load_generator(path):
    """A checkpoint's tokenizer and ``generator(ids (T,)) -> logits (T, V)`` from its masked LM:
    an ELECTRA model's generator, or a BERT pre-training model's MLM head."""
    from autograd import no_grad
    from minilm.checkpoint import load_model
    model, tokenizer, meta = load_model(path)
    if tokenizer is None:
        raise MiniLMError(f"plot corruption: {path} holds no tokenizer")
    masked_lm = getattr(model, "generator", None)
    masked_lm = model if masked_lm is None else masked_lm

    from minilm.plots.attention import context_length
    window = context_length(masked_lm) or context_length(model) or 10**9

    def generator(ids):
        ids = np.asarray(ids, dtype=np.int64)
        return np.concatenate([logits_of(ids[i:i + window]) for i in range(0, len(ids), window)])

    def logits_of(ids):  # a text longer than the model's context is read a window at a time
        with no_grad():
            out = masked_lm(ids[None])                               # (1, T) -> logits or a dict
        if isinstance(out, dict):
            if "mlm_logits" not in out:
                raise MiniLMError(f"plot corruption: the {meta.get('family')} model in {path} has no masked-LM "
                                  f"head (its outputs: {sorted(out)}); give a BERT or ELECTRA checkpoint")
            out = out["mlm_logits"]
        if isinstance(out, tuple):
            raise MiniLMError(f"plot corruption: the {meta.get('family')} model in {path} is not a masked LM; "
                              f"give a BERT or ELECTRA checkpoint")
        return out.data[0]                                          # (T, V)
    return tokenizer, generator


def run_losses(args):
    from minilm.plots import compare_loss_curves
    histories, seen = {}, set()
    for run in args.runs:
        if run.resolve() in seen:
            print(f"plot losses: {run} was given twice; drawn once", file=sys.stderr)
            continue
        seen.add(run.resolve())
        f = run / "history.json"
        if not f.is_file():
            raise MiniLMError(f"plot losses: {f} not found; give folders written by minilm train "
                              f"(e.g. runs/gpt)")
        try:
            h = json.loads(f.read_text(encoding="utf-8"))
        except json.JSONDecodeError as e:
            raise MiniLMError(f"plot losses: {f} is not valid JSON: {e}") from None
        if not isinstance(h, dict) or not h.get("step") or len(h.get("loss", ())) != len(h["step"]):
            raise MiniLMError(f"plot losses: {f} has no step/loss lists of equal length")
        name = run.resolve().name
        histories[name if name not in histories else str(run)] = h  # two runs/gpt folders: full paths
    return _done(compare_loss_curves(histories, args.out, title=args.title))
