"""BART: reconstruct the clean document from a noised one (text infilling + sentence permutation).

Lewis et al. 2020 §2.2 and §5.1; fairseq's ``denoising_dataset.py``: each example is a block of whole sentences,
<s> … </s> ([CLS] … [SEP] in minilm's WordPiece vocabulary). Its sentences are shuffled, then
spans with Poisson(λ=3) lengths covering 30% of the words are each replaced by ONE [MASK] (a
0-length span inserts one). The encoder reads the noised block; the decoder writes the clean one,
starting from </s> (the target with </s> moved to the front). New noise every step; ``--noising``
picks other functions of §2.2 instead (Table 1's ablation: ``minilm experiment bart-noising``). The summary
compares the held-out loss per target token with a unigram and a bigram model of the clean text
(which never see the noised input), and reports how often greedy decoding restores a block exactly
(copying the noised input would almost never be right: see copy_exact_match).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from autograd.errors import ConfigError
from minilm.models.bart import BartConfig
from minilm.recipes import recipe
from minilm.recipes.config import nested
from minilm.train import TrainConfig
from minilm.recipes.common import CorpusConfig, load_documents, texts
from minilm.recipes.seq2seq import Seq2SeqRecipe


@dataclass
class BartRecipeConfig(CorpusConfig):
    """``minilm train bart``: one option per field."""
    max_length: int = 32              # tokens per block, <s> and </s> included
    mask_ratio: float = 0.3           # share of words masked in spans
    permute_sentences: float = 1.0    # share of sentences shuffled
    poisson_lambda: float = 3.0       # mean span length in words
    noising: str = "infilling+permutation"  # BART's noising functions (§2.2), '+'-joined: masking, deletion,
                                            # infilling, permutation, rotation
    model: BartConfig = nested(BartConfig(n_layer=2, n_head=4, n_embd=64, dropout=0.0),
                               set_by_recipe=("vocab_size", "max_positions", "pad_id", "bos_id", "eos_id",
                                              "mask_id", "seed", "position_offset"))
    batch_size: int = 12              # blocks per step
    vocab_size: int = 400             # WordPiece vocabulary size
    train: TrainConfig = nested(TrainConfig(steps=600, lr=2e-3, warmup=60))


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


@recipe("bart", config=BartRecipeConfig, chapter=9,
        variants={"rotation": {"noising": "infilling+permutation+rotation"}})
class BartRecipe(Seq2SeqRecipe):
    def __init__(self, cfg: BartRecipeConfig):
        from minilm.models.bart import Bart
        from minilm.tokenizers import WordPieceTokenizer
        from minilm.corruption import noising_options
        if cfg.max_length < 4:
            raise ConfigError(f"minilm train bart: --max-length {cfg.max_length} is too short (at least 4)")
        self.noising = noising_options(cfg.noising, mask_ratio=cfg.mask_ratio, permute_sentences=cfg.permute_sentences,
                                       poisson_lambda=cfg.poisson_lambda)  # bart_noise's keywords
        self.cfg, self.batch_size = cfg, cfg.batch_size
        train_docs, val_docs = load_documents(cfg)
        tok = self.tokenizer = WordPieceTokenizer.train(texts(train_docs), cfg.vocab_size)
        V = tok.vocab_size
        self.full_stop_id = tok.token_to_id(".") if "." in tok.get_vocab() else tok.sep_id
        # whole-word masking: a "##" piece continues the word before it
        self.word_starts = np.array([not tok.id_to_token(i).startswith("##") for i in range(V)])
        self.train_blocks = sentence_blocks(train_docs, tok, cfg.max_length)
        val_blocks = sentence_blocks(val_docs, tok, cfg.max_length)[:128]
        rng = np.random.default_rng([cfg.seed, 99])
        self.val = [(self.noise(b, rng), b) for b in val_blocks]        # fixed noise: comparable evals
        self.model_config = replace(cfg.model, vocab_size=V, max_positions=2 * cfg.max_length, pad_id=tok.pad_id,
                                    bos_id=tok.cls_id, eos_id=tok.sep_id, mask_id=tok.mask_id)
        self.model = Bart(self.model_config, rng=np.random.default_rng(cfg.seed))

    def noise(self, ids, rng):
        from minilm.corruption import bart_noise
        return bart_noise(ids, rng=rng, mask_id=self.tokenizer.mask_id, vocab_size=self.tokenizer.vocab_size,
                          full_stop_id=self.full_stop_id, word_start_table=self.word_starts, **self.noising)

    def batch(self, rng):
        picks = rng.integers(len(self.train_blocks), size=self.batch_size)
        return self._arrays([(self.noise(self.train_blocks[i], rng), self.train_blocks[i]) for i in picks])

    def evaluate(self, model):
        """The held-out loss and token accuracy, and the exact reconstructions of 16 blocks (greedy
        decoding is slower; the generated ids start after the </s> start token: <s> … </s>)."""
        metrics = self.token_metrics(model, self.val)
        metrics["exact_match"] = self.greedy_exact_match(model, self.val[:16], self.cfg.max_length + 2,
                                                         self.tokenizer.sep_id)
        return metrics

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

    @staticmethod
    def describe(s) -> str:
        b, m = s["baselines"], s["metrics"]
        verdict = "beats" if s["final_loss"] < b["bigram_loss"] else "does NOT beat"
        return (f"BART: held-out reconstruction loss {s['initial_loss']:.3f} -> {s['final_loss']:.3f} nats/token "
                f"after {s['steps']} steps, {s['parameters']:,} parameters; token accuracy {m['token_accuracy']:.1%}, "
                f"exact reconstructions {m['exact_match']:.1%} (copying the noised input: "
                f"{b['copy_exact_match']:.1%})\nbaselines that ignore the noised input: unigram "
                f"{b['unigram_loss']:.3f}, bigram {b['bigram_loss']:.3f} -> BART {verdict} the bigram model")

