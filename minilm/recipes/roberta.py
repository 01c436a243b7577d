"""RoBERTa: masked LM only, on packed full sentences, with a new mask every epoch.

Liu et al. 2019 §4: byte-level BPE tokens; blocks of whole sentences up to
--tokens-per-sample with <s> in front (FULL-SENTENCES across documents, or DOC-SENTENCES inside
one, --packing full|doc); no NSP, one segment; 15% of the tokens masked (80% <mask>, 10% random,
10% kept) with a fresh mask for every (seed, epoch, sequence) — or, with --masking static, one of
--static-copies masks made up front (BERT's dupe_factor). The batches walk the data epoch by epoch,
so "epoch" means what it says. With --whole-word-mask the words are masked whole: a word is a
token starting with "Ġ" (a space before it) and the tokens that follow it up to the next such token
(or special token); each sentence's first token also starts a word (fairseq's --mask-whole-words;
minilm/corruption/roberta_wwm.py). The held-out blocks are masked the same way as the training ones.
The summary compares held-out MLM accuracy with always predicting the most frequent token, and the
MLM loss with a unigram model.

The paper's two other input formats (§4.2, Table 2) are here for comparison (``minilm experiment
roberta-inputs``): --packing segment-pair or sentence-pair makes BERT's ``<s> A </s> B </s>`` pairs
(segments of whole sentences, or one sentence each) and trains them with MLM + NSP on
BertForPreTraining, since RoBERTa's model has no NSP head. --tokens-per-batch fills each step with
inputs up to a token budget instead of --batch-size blocks (the paper's dynamic batch size).
"""
from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from typing import Literal

import numpy as np

import autograd.functional as F
from autograd.errors import ConfigError
from minilm.models.roberta import RobertaConfig
from minilm.recipes import recipe
from minilm.recipes.bert import MODEL_SET_BY_RECIPE
from minilm.recipes.common import CorpusConfig, load_documents, texts
from minilm.recipes.config import nested
from minilm.train import TrainConfig

InputFormat = Literal["full", "doc", "segment-pair", "sentence-pair"]
PAIR_FORMATS = ("segment-pair", "sentence-pair")       # the two with next-sentence prediction


@dataclass
class RobertaRecipeConfig(CorpusConfig):
    """``minilm train roberta``: one option per field."""
    tokens_per_sample: int = 64                        # tokens per block, <s> included (RoBERTa: 512)
    packing: InputFormat = "full"                      # the input format (Liu et al. 2019, §4.2): FULL-SENTENCES
                                                       # (blocks cross documents), DOC-SENTENCES, or BERT's pairs
                                                       # trained with NSP too: SEGMENT-PAIR+NSP (segments of whole
                                                       # sentences), SENTENCE-PAIR+NSP (one sentence a segment);
                                                       # pairs train BertForPreTraining (RoBERTa has no NSP head)
    masking: Literal["dynamic", "static"] = "dynamic"  # a new mask every epoch (RoBERTa) or --static-copies
                                                       # fixed masks (BERT)
    static_copies: int = 10                            # masks per sequence with --masking static
    mask_prob: float = 0.15                            # share of tokens masked
    model: RobertaConfig = nested(RobertaConfig(vocab_size=600, n_layer=2, n_head=4, n_embd=64, dropout=0.0),
                                  set_by_recipe=MODEL_SET_BY_RECIPE)
    batch_size: int = 32                               # blocks per step
    tokens_per_batch: int = 0                          # > 0: each step takes sequences until the next would pass
                                                       # this many tokens (the paper's dynamic batch size for
                                                       # DOC-SENTENCES and SENTENCE-PAIR); 0: --batch-size blocks
    vocab_size: int = 600                              # byte-level BPE vocabulary: 5 specials + 256 bytes + merges
    whole_word_mask: bool = False                      # mask whole words: the tokens after a "Ġ" token go with it
                                                       # (fairseq's --mask-whole-words)
    train: TrainConfig = nested(TrainConfig(steps=600, lr=2e-3, warmup=60))


def downstream_texts(seed: int, n: int = 1000) -> list[str]:
    """Sentences of the sentiment task, added to the tokenizer's training text (not to pre-training)
    so that the fine-tuning words have tokens of their own, as ``minilm.downstream.finetune`` does."""
    from minilm.data import sentiment_dataset
    return [e.text for e in sentiment_dataset(n, rng=np.random.default_rng([seed, 31]))]


def corpus_and_tokenizer(cfg, tokenizer_cls):
    """``(train documents, held-out documents, tokenizer)``: the documents of ``cfg`` (its corpus
    options) and a ``tokenizer_cls`` of ``cfg.vocab_size`` trained on the training documents plus
    ``downstream_texts(cfg.seed)`` — what the RoBERTa and ELECTRA recipes pre-train with."""
    train_docs, val_docs = load_documents(cfg)
    return train_docs, val_docs, tokenizer_cls.train(texts(train_docs) + downstream_texts(cfg.seed), cfg.vocab_size)


def word_start_blocks(docs, tokenizer, tokens_per_sample: int, mode: str = "full"):
    """RoBERTa's blocks of ``docs`` (documents of sentence strings), with the word start of every token.

    Returns ``(positions, ids, starts)``: ``ids`` (N,) and ``starts`` (N,) are every token of the
    corpus in order, then ``</s>`` and ``<s>``, with a bool saying whether the token begins a word
    (``bpe_word_starts`` of each sentence on its own: a sentence's first word, which has no space
    before it, begins a word); ``positions`` is one index array per block, such that ``ids[p]`` are
    exactly the blocks ``roberta_blocks`` makes of the encoded documents and ``starts[p]`` their
    word starts. The flags follow the tokens through the packing because the *indices* are packed."""
    from minilm.corruption import bpe_word_starts
    from minilm.data import encode_documents, roberta_blocks
    ids, starts, index_docs = [], [], []
    for doc in encode_documents(docs, tokenizer.encode):
        index_doc = []
        for sentence in doc:
            index_doc.append(list(range(len(ids), len(ids) + len(sentence))))
            ids.extend(sentence)
            starts.extend(bpe_word_starts(tokenizer.convert_ids_to_tokens(sentence), tokenizer.special_tokens))
        index_docs.append(index_doc)
    sep_index, bos_index = len(ids), len(ids) + 1              # the entries of </s> and <s>
    ids = np.asarray(ids + [tokenizer.eos_id, tokenizer.bos_id], dtype=np.int64)
    starts = np.asarray(starts + [True, True], dtype=bool)
    positions = [np.asarray(b, dtype=np.int64) for b in roberta_blocks(
        index_docs, tokens_per_sample, bos_id=bos_index, sep_id=sep_index, mode=mode)]
    return positions, ids, starts


def step_of(rng, fallback: int) -> int:
    """The training step that drew ``rng``. ``minilm.train`` draws the batch of step s with
    ``default_rng([seed, s])`` (see its docstring), and a Generator remembers its seed, so the step
    — hence the epoch — is known without any state that a resumed run would lose. Any other
    Generator gets ``fallback`` (a running count)."""
    entropy = getattr(getattr(rng.bit_generator, "seed_seq", None), "entropy", None)
    if isinstance(entropy, (list, tuple)) and len(entropy) == 2:
        return int(entropy[1])
    return fallback


@recipe("roberta", config=RobertaRecipeConfig, chapter=6,
        variants={"wwm": {"whole_word_mask": True}, "static": {"masking": "static"},
                  "doc": {"packing": "doc"}, "segment-pair": {"packing": "segment-pair"},
                  "sentence-pair": {"packing": "sentence-pair"}})
class RobertaRecipe:
    def __init__(self, cfg: RobertaRecipeConfig):
        from minilm.downstream.baselines import MostFrequentToken, NGramLM
        from minilm.corruption import MaskedDataset, roberta_mask
        from minilm.data import encode_documents, roberta_blocks
        from minilm.models.roberta import RobertaForMaskedLM
        from minilm.tokenizers import ByteLevelBPETokenizer
        train_docs, val_docs, tok = corpus_and_tokenizer(cfg, ByteLevelBPETokenizer)
        self.tokenizer = tok
        V = tok.vocab_size

        def blocks(docs):
            ids = encode_documents(docs, tok.encode)
            return [np.asarray(b, dtype=np.int64) for b in roberta_blocks(
                ids, cfg.tokens_per_sample, bos_id=tok.bos_id, sep_id=tok.eos_id, mode=cfg.packing)]

        self.masker = functools.partial(roberta_mask, mask_id=tok.mask_id, vocab_size=V,
                                        nspecial=max(tok.special_ids) + 1, pad_id=tok.pad_id, prob=cfg.mask_prob)
        self.whole_word, self.pairs = cfg.whole_word_mask, cfg.packing in PAIR_FORMATS
        self.segments = self.nsp_labels = None
        if self.pairs:
            if self.whole_word:
                raise ConfigError(f"--packing {cfg.packing} with --whole-word-mask: the pair formats mask "
                                  "single tokens; expected one of them, not both")
            train_pairs, val_pairs = self._nsp_pairs(train_docs, cfg, 777), self._nsp_pairs(val_docs, cfg, 98)[:128]
            self.train_blocks = [np.asarray(i.input_ids, dtype=np.int64) for i in train_pairs]
            self.segments = [np.asarray(i.segment_ids, dtype=np.int64) for i in train_pairs]
            self.nsp_labels = np.array([i.next_sentence_label for i in train_pairs], dtype=np.int64)
            sequences, masker, val_masker = self.train_blocks, self.masker, self.masker
            val_sequences = [np.asarray(i.input_ids, dtype=np.int64) for i in val_pairs]
        elif self.whole_word:
            self.train_blocks, self.train_word_starts, sequences, masker = self._whole_word_data(
                train_docs, cfg, V)
            _, _, val_sequences, val_masker = self._whole_word_data(val_docs, cfg, V)
            val_sequences = val_sequences[:128]
        else:
            self.train_blocks, val_blocks = blocks(train_docs), blocks(val_docs)[:128]
            sequences, masker, val_sequences, val_masker = self.train_blocks, self.masker, val_blocks, self.masker
        self.data = MaskedDataset(sequences, masker, seed=cfg.seed,
                                  dynamic=cfg.masking == "dynamic", static_copies=cfg.static_copies)
        # the held-out blocks get one fixed mask each, so that evaluations are comparable
        self.val = self._arrays([val_masker(b, rng=np.random.default_rng([cfg.seed, 99, i]))
                                 for i, b in enumerate(val_sequences)])
        if self.pairs:
            self.val.update(self._pair_arrays([np.asarray(i.segment_ids) for i in val_pairs],
                                              [i.next_sentence_label for i in val_pairs]))
        self.seed, self.batch_size, self._draws = cfg.seed, cfg.batch_size, 0
        self.tokens_per_batch, self._step_starts, self._orders = cfg.tokens_per_batch, [0], {}
        self.model_config = dataclasses.replace(cfg.model, vocab_size=V, max_position_embeddings=cfg.tokens_per_sample)
        if self.pairs:  # BERT's model for the NSP head, RoBERTa's config (with a second segment) and masking
            from minilm.models.bert_heads import BertForPreTraining
            self.model_config = dataclasses.replace(self.model_config, type_vocab_size=2)
            self.model = BertForPreTraining(self.model_config, rng=np.random.default_rng(cfg.seed))
        else:
            self.model = RobertaForMaskedLM(self.model_config, rng=np.random.default_rng(cfg.seed))
        self.most_frequent = MostFrequentToken().fit(self.train_blocks, ignore_ids=tok.special_ids)
        self.unigram = NGramLM(order=1).fit(self.train_blocks, V)

    def _whole_word_data(self, docs, cfg, V):
        """--whole-word-mask: (blocks, word starts, sequences, masker) for MaskedDataset. Its sequences
        are the blocks' token *indices* (``word_start_blocks``), so the masker can look up both the
        ids and the word starts of what it is given."""
        from minilm.corruption import roberta_whole_word_mask
        tok = self.tokenizer
        positions, flat_ids, flat_starts = word_start_blocks(docs, tok, cfg.tokens_per_sample, cfg.packing)
        block_ids, starts = [flat_ids[p] for p in positions], [flat_starts[p] for p in positions]

        def masker(index_block, *, rng):
            return roberta_whole_word_mask(flat_ids[index_block], flat_starts[index_block], mask_id=tok.mask_id,
                                           vocab_size=V, nspecial=max(tok.special_ids) + 1, pad_id=tok.pad_id,
                                           prob=cfg.mask_prob, rng=rng)
        return block_ids, starts, positions, masker

    def _nsp_pairs(self, docs, cfg, salt: int):
        """The NSP instances of ``docs`` for --packing segment-pair (BERT's ``create_nsp_instances``:
        segments of whole sentences filling ``tokens_per_sample``) or sentence-pair (one sentence a
        segment), laid out ``<s> A </s> B </s>`` with segment ids 0 / 1; one pass over the documents."""
        from minilm.data import create_nsp_instances, encode_documents, sentence_pair_instances
        tok = self.tokenizer
        build = create_nsp_instances if cfg.packing == "segment-pair" else sentence_pair_instances
        return build(encode_documents(docs, tok.encode), max_seq_length=cfg.tokens_per_sample,
                     rng=np.random.default_rng([cfg.seed, salt]), cls_id=tok.bos_id, sep_id=tok.eos_id)

    def _pair_arrays(self, segments, nsp_labels) -> dict:
        """The pair formats' extra inputs: padded ``segment_ids`` (B, T) and ``nsp_labels`` (B,)."""
        from minilm.data import pad_batch
        return {"segment_ids": pad_batch(list(segments), 0)[0],
                "nsp_labels": np.asarray(nsp_labels, dtype=np.int64)}

    def _arrays(self, masked_pairs):
        """[(inputs, targets)] of different lengths → padded inputs, attention mask, -100 labels."""
        from minilm.corruption import targets_to_labels
        from minilm.data import pad_batch
        pad = self.tokenizer.pad_id
        inputs, attention_mask = pad_batch([i for i, _ in masked_pairs], pad)
        targets, _ = pad_batch([t for _, t in masked_pairs], pad)
        return {"input_ids": inputs, "attention_mask": attention_mask,
                "labels": targets_to_labels(targets, pad_id=pad)}

    def epoch_schedule(self, step: int) -> list[tuple[int, int]]:
        """(epoch, index) of the sequences of ``step``'s batch: the data is read epoch after epoch,
        each epoch in its own shuffled order, ``batch_size`` sequences per step."""
        if self.tokens_per_batch > 0:
            return self._filled_schedule(step)
        N, B = len(self.train_blocks), self.batch_size
        out = []
        for position in range(step * B, (step + 1) * B):
            epoch = position // N
            order = np.random.default_rng([self.seed, epoch, 7]).permutation(N)
            out.append((epoch, int(order[position % N])))
        return out

    def _filled_schedule(self, step: int) -> list[tuple[int, int]]:
        """--tokens-per-batch: the same epoch-by-epoch order, but each step takes sequences while their
        tokens fit the budget (at least one), so that short sequences make bigger batches — the paper's
        dynamic batch size (Liu et al. 2019, §4.2). Where each step starts depends on every step
        before it, so the starts are walked from step 0 once and remembered."""
        N, starts = len(self.train_blocks), self._step_starts

        def at(position):
            epoch = position // N
            if epoch not in self._orders:
                self._orders[epoch] = np.random.default_rng([self.seed, epoch, 7]).permutation(N)
            return epoch, int(self._orders[epoch][position % N])

        while len(starts) <= step + 1:
            position, used = starts[-1], 0
            while True:
                n = len(self.train_blocks[at(position)[1]])
                if used and used + n > self.tokens_per_batch:
                    break
                used, position = used + n, position + 1
            starts.append(position)
        return [at(p) for p in range(starts[step], starts[step + 1])]

    def batch(self, rng):
        step = step_of(rng, self._draws)
        self._draws += 1
        return self.batch_of(self.epoch_schedule(step))

    def batch_of(self, schedule: list[tuple[int, int]]) -> dict:
        """The padded batch of the training sequences ``schedule`` names, as (epoch, index) pairs, each
        masked as its epoch masks it (``batch`` serves one step's schedule; the batch-size experiment
        draws its own to measure the gradient noise)."""
        out = self._arrays([self.data.get(index, epoch) for epoch, index in schedule])
        if self.pairs:
            out.update(self._pair_arrays([self.segments[i] for _, i in schedule],
                                         self.nsp_labels[[i for _, i in schedule]]))
        return out

    def loss(self, model, batch):
        if self.pairs:  # L = L_MLM + L_NSP (BertForPreTraining)
            out = model(batch["input_ids"], batch["segment_ids"], batch["attention_mask"],
                        mlm_labels=batch["labels"], nsp_labels=batch["nsp_labels"])
        else:
            out = model(batch["input_ids"], batch["attention_mask"], labels=batch["labels"])
        return out["loss"], {"tokens": int(batch["attention_mask"].sum())}

    def mlm_logits(self, model, input_ids, attention_mask, segment_ids=None):
        """(B, T, V): the masked-LM logits of this recipe's model (RoBERTa's, or BertForPreTraining
        for the pair formats; no ``segment_ids``: all segment 0)."""
        if self.pairs:
            return model(input_ids, segment_ids, attention_mask)["mlm_logits"]
        return model(input_ids, attention_mask)["logits"]

    def evaluate(self, model, rows: slice = slice(None)):
        """Held-out MLM loss and accuracy (and NSP accuracy for the pair formats) on the held-out
        sequences ``rows`` selects (all of them by default; the batch-size experiment picks its
        learning rate on one half and reports the other)."""
        val = {k: v[rows] for k, v in self.val.items()}
        total = correct = n = nsp_correct = 0
        for i in range(0, len(val["input_ids"]), 64):
            sl = slice(i, i + 64)
            labels = val["labels"][sl]
            if self.pairs:
                out = model(val["input_ids"][sl], val["segment_ids"][sl], val["attention_mask"][sl])
                logits = out["mlm_logits"]
                nsp_correct += int((out["nsp_logits"].data.argmax(-1) == val["nsp_labels"][sl]).sum())
            else:
                logits = model(val["input_ids"][sl], val["attention_mask"][sl])["logits"]
            total += F.cross_entropy(logits, labels, reduction="sum").item()
            m = labels != -100
            correct += int((logits.data.argmax(-1)[m] == labels[m]).sum())
            n += int(m.sum())
        out = {"loss": total / max(n, 1), "mlm_accuracy": correct / max(n, 1)}
        if self.pairs:
            out["nsp_accuracy"] = nsp_correct / max(len(val["input_ids"]), 1)
        return out

    def baselines(self):
        labels = self.val["labels"]
        return {"most_frequent_token_accuracy": self.most_frequent.accuracy(labels),
                "unigram_loss": self.unigram.loss(labels, labels)}

    @staticmethod
    def describe(s) -> str:
        m, b = s["metrics"], s["baselines"]
        return (f"RoBERTa: held-out MLM loss {s['initial_loss']:.3f} -> {s['final_loss']:.3f} after {s['steps']} "
                f"steps, {s['parameters']:,} parameters (unigram model: {b['unigram_loss']:.3f})\n"
                f"MLM accuracy {m['mlm_accuracy']:.1%} vs most-frequent-token {b['most_frequent_token_accuracy']:.1%} "
                f"({100 * (m['mlm_accuracy'] - b['most_frequent_token_accuracy']):+.1f} points)"
                + (f"; NSP accuracy {m['nsp_accuracy']:.1%}" if "nsp_accuracy" in m else ""))

