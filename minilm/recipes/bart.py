"""BART: reconstruct the clean document from a noised one (text infilling + sentence permutation).

Lewis et al. 2020 §2.2 and §5.1; fairseq's ``denoising_dataset.py``: each example is a block of whole sentences,
<s> … </s> ([CLS] … [SEP] in minilm's WordPiece vocabulary). Its sentences are shuffled, then
spans with Poisson(λ=3) lengths covering 30% of the words are each replaced by ONE [MASK] (a
0-length span inserts one). The encoder reads the noised block; the decoder writes the clean one,
starting from </s> (the target with </s> moved to the front). New noise every step. The summary
compares the held-out loss per target token with a unigram and a bigram model of the clean text
(which never see the noised input), and reports how often greedy decoding restores a block exactly
(copying the noised input would almost never be right: see copy_exact_match).
"""
from __future__ import annotations

import numpy as np

from autograd.errors import ConfigError
from minilm.recipes.common import add_corpus_arguments, load_documents, texts
from minilm.recipes.t5 import exact_match, token_stats

TRAIN_DEFAULTS = {"steps": 600, "lr": 2e-3, "warmup": 60, "eval_every": 100, "checkpoint_every": 100}


def add_arguments(p):
    add_corpus_arguments(p)
    p.add_argument("--max-length", type=int, default=32, help="tokens per block, <s> and </s> included (default 32)")
    p.add_argument("--mask-ratio", type=float, default=0.3, help="share of words masked in spans (default 0.3)")
    p.add_argument("--permute-sentences", type=float, default=1.0, help="share of sentences shuffled (default 1)")
    p.add_argument("--poisson-lambda", type=float, default=3.0, help="mean span length in words (default 3)")
    p.add_argument("--n-layer", type=int, default=2, help="encoder and decoder blocks each (default 2)")
    p.add_argument("--n-head", type=int, default=4, help="attention heads (default 4)")
    p.add_argument("--n-embd", type=int, default=64, help="model width (default 64)")
    p.add_argument("--batch-size", type=int, default=12, help="blocks per step (default 12)")
    p.add_argument("--vocab-size", type=int, default=400, help="WordPiece vocabulary size (default 400)")
    p.add_argument("--dropout", type=float, default=0.0, help="dropout probability (default 0)")


def sentence_blocks(docs, tok, max_length: int) -> list[np.ndarray]:
    """fairseq's ``complete_doc`` blocks: consecutive whole sentences of one document, at most
    ``max_length`` tokens with <s> and </s> around them. A sentence longer than a block is cut."""
    blocks = []
    room = max_length - 2
    for doc in docs:
        current: list[int] = []
        for sentence in doc:
            ids = tok.encode(sentence)[:room]
            if current and len(current) + len(ids) > room:
                blocks.append(current)
                current = []
            current = current + ids
        if current:
            blocks.append(current)
    return [np.array([tok.cls_id, *b, tok.sep_id], dtype=np.int64) for b in blocks]


class BartRecipe:
    family = "bart"

    def __init__(self, args):
        from minilm.models.bart import Bart, BartConfig
        from minilm.tokenizers import WordPieceTokenizer
        if args.max_length < 4:
            raise ConfigError(f"minilm train bart: --max-length {args.max_length} is too short (at least 4)")
        self.args, self.batch_size = args, args.batch_size
        train_docs, val_docs = load_documents(args)
        tok = self.tokenizer = WordPieceTokenizer.train(texts(train_docs), args.vocab_size)
        V = tok.vocab_size
        self.full_stop_id = tok.token_to_id(".") if "." in tok.get_vocab() else tok.sep_id
        # whole-word masking: a "##" piece continues the word before it
        self.word_starts = np.array([not tok.id_to_token(i).startswith("##") for i in range(V)])
        self.train_blocks = sentence_blocks(train_docs, tok, args.max_length)
        val_blocks = sentence_blocks(val_docs, tok, args.max_length)[:128]
        rng = np.random.default_rng([args.seed, 99])
        self.val = [(self.noise(b, rng), b) for b in val_blocks]        # fixed noise: comparable evals
        self.model_config = BartConfig(vocab_size=V, n_embd=args.n_embd, n_head=args.n_head, n_layer=args.n_layer,
                                       max_positions=2 * args.max_length, dropout=args.dropout,
                                       pad_id=tok.pad_id, bos_id=tok.cls_id, eos_id=tok.sep_id,
                                       mask_id=tok.mask_id)
        self.model = Bart(self.model_config, rng=np.random.default_rng(args.seed))

    def noise(self, ids, rng):
        from minilm.corruption import bart_noise
        a = self.args
        return bart_noise(ids, rng=rng, mask_id=self.tokenizer.mask_id, vocab_size=self.tokenizer.vocab_size,
                          full_stop_id=self.full_stop_id, mask_ratio=a.mask_ratio,
                          permute_sentences=a.permute_sentences, poisson_lambda=a.poisson_lambda,
                          word_start_table=self.word_starts)

    def _arrays(self, pairs):
        from minilm.data import pad_batch
        src, src_mask = pad_batch([s for s, _ in pairs], self.tokenizer.pad_id)
        labels, _ = pad_batch([t for _, t in pairs], -100)
        return src, src_mask, labels

    def batch(self, rng):
        picks = rng.integers(len(self.train_blocks), size=self.batch_size)
        return self._arrays([(self.noise(self.train_blocks[i], rng), self.train_blocks[i]) for i in picks])

    def loss(self, model, batch):
        src, src_mask, labels = batch
        out = model(src, attention_mask=src_mask, labels=labels)
        return out["loss"], {"tokens": int(src_mask.sum() + (labels != -100).sum())}

    def evaluate(self, model):
        from minilm.models.seq2seq import strip_after_eos
        total, correct, n = 0.0, 0, 0
        for i in range(0, len(self.val), 64):
            src, src_mask, labels = self._arrays(self.val[i:i + 64])
            logits = model(src, attention_mask=src_mask, labels=labels)["logits"]
            ce, ok, count = token_stats(logits, labels)
            total, correct, n = total + ce, correct + ok, n + count
        few = self.val[:16]                                              # greedy decoding is slower
        src, src_mask, _ = self._arrays(few)
        out = model.generate(src, self.args.max_length + 2, attention_mask=src_mask)
        # the generated ids start after the </s> start token: <s> … </s>
        em = exact_match(strip_after_eos(out, self.tokenizer.sep_id), [t.tolist() for _, t in few])
        return {"loss": total / n, "token_accuracy": correct / n, "exact_match": em}

    def baselines(self):
        from minilm.downstream.baselines import NGramLM
        V = self.tokenizer.vocab_size
        # the LM baselines predict each clean token from the one before (the decoder's input)
        x = np.concatenate([np.r_[self.tokenizer.sep_id, t[:-1]] for _, t in self.val])
        y = np.concatenate([t for _, t in self.val])
        unigram = NGramLM(order=1).fit(self.train_blocks, V)
        bigram = NGramLM(order=2).fit(self.train_blocks, V)
        copy = np.mean([len(s) == len(t) and (s == t).all() for s, t in self.val])
        return {"unigram_loss": unigram.loss(x, y), "bigram_loss": bigram.loss(x, y),
                "copy_exact_match": float(copy)}


def build(args):
    return BartRecipe(args)


def describe(s) -> str:
    b, m = s["baselines"], s["metrics"]
    verdict = "beats" if s["final_loss"] < b["bigram_loss"] else "does NOT beat"
    return (f"BART: held-out reconstruction loss {s['initial_loss']:.3f} -> {s['final_loss']:.3f} nats/token after "
            f"{s['steps']} steps, {s['parameters']:,} parameters; token accuracy {m['token_accuracy']:.1%}, "
            f"exact reconstructions {m['exact_match']:.1%} (copying the noised input: {b['copy_exact_match']:.1%})\n"
            f"baselines that ignore the noised input: unigram {b['unigram_loss']:.3f}, bigram {b['bigram_loss']:.3f}"
            f" -> BART {verdict} the bigram model")
