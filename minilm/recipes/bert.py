"""BERT: masked-LM + next-sentence prediction on [CLS] A [SEP] B [SEP] pairs.

L = L_MLM + L_NSP. The masked LM predicts ~15% of tokens (80% [MASK], 10% random, 10% kept) from
both sides; NSP classifies from the pooled [CLS] whether B followed A (IsNext) or came from another
document (NotNext). The summary compares held-out MLM accuracy with always predicting the most
frequent token, and NSP accuracy with chance (50%).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from minilm.corruption import mask_tokens, mask_tokens_wwm
from minilm.data import create_nsp_instances, encode_documents, nsp_arrays
from minilm.downstream.baselines import MostFrequentToken, NGramLM
from minilm.models.bert import BertConfig
from minilm.models.bert_heads import BertForPreTraining
from minilm.recipes.common import CorpusConfig, load_documents, texts
from minilm.recipes import recipe
from minilm.recipes.config import nested
from minilm.train import TrainConfig
from minilm.tokenizers import WordPieceTokenizer

# the model's fields the data decides (the tokenizer's vocabulary, the block length), not options
MODEL_SET_BY_RECIPE = ("vocab_size", "max_position_embeddings", "type_vocab_size", "position_offset", "pad_token_id")


@dataclass
class BertRecipeConfig(CorpusConfig):
    """``minilm train bert``: one option per field, the model's and the schedule's included."""
    model: BertConfig = nested(BertConfig(vocab_size=400, n_layer=2, n_head=4, n_embd=64, dropout=0.0),
                               set_by_recipe=MODEL_SET_BY_RECIPE)
    max_seq_length: int = 48        # tokens per pair
    batch_size: int = 32            # pairs per step
    vocab_size: int = 400           # WordPiece vocabulary size
    whole_word_mask: bool = False   # mask whole words: a ## piece is masked with its word (BERT's
                                    # do_whole_word_mask, Task 12.2)
    dupe_factor: int = 5            # passes over the corpus when building NSP pairs (BERT's dupe_factor)
    train: TrainConfig = nested(TrainConfig(steps=2000, warmup=80, eval_every=200, checkpoint_every=200))


@recipe("bert", config=BertRecipeConfig, chapter=5,
        variants={"wwm": {"whole_word_mask": True}})
class BertRecipe:
    def __init__(self, cfg: BertRecipeConfig):
        train_docs, val_docs = load_documents(cfg)
        tok = self.tokenizer = WordPieceTokenizer.train(texts(train_docs), cfg.vocab_size)
        rng = np.random.default_rng([cfg.seed, 777])

        def pairs(docs, passes):
            ids = encode_documents(docs, tok.encode)
            inst = [i for _ in range(passes) for i in create_nsp_instances(
                ids, max_seq_length=cfg.max_seq_length, rng=rng, cls_id=tok.cls_id, sep_id=tok.sep_id)]
            return nsp_arrays(inst, max_seq_length=cfg.max_seq_length, pad_id=tok.pad_id)

        self.train = pairs(train_docs, cfg.dupe_factor)
        self.val = pairs(val_docs, 2)
        self.special = [tok.pad_id, tok.cls_id, tok.sep_id]
        self.whole_word = cfg.whole_word_mask
        # one fixed mask of the held-out pairs, so evaluations are comparable across steps
        self.val_inputs, self.val_labels = self._mask(self.val["input_ids"], np.random.default_rng([cfg.seed, 99]))
        self.batch_size = cfg.batch_size
        self.model_config = replace(cfg.model, vocab_size=tok.vocab_size, max_position_embeddings=cfg.max_seq_length)
        self.model = BertForPreTraining(self.model_config, rng=np.random.default_rng(cfg.seed))
        self.most_frequent = MostFrequentToken().fit(self.train["input_ids"], ignore_ids=self.special)
        self.unigram = NGramLM(order=1).fit([r[r != tok.pad_id] for r in self.train["input_ids"]], tok.vocab_size)

    def _mask(self, ids, rng):
        tok = self.tokenizer
        if self.whole_word:  # BERT's fixed budget per sequence, whole words only
            tokens = [tok.convert_ids_to_tokens(row.tolist()) for row in ids]
            return mask_tokens_wwm(ids, tokens, mask_id=tok.mask_id, vocab_size=tok.vocab_size, rng=rng,
                                   special_ids=self.special)
        return mask_tokens(ids, mask_id=tok.mask_id, vocab_size=tok.vocab_size, special_ids=self.special, rng=rng)

    def batch(self, rng):
        idx = rng.integers(0, len(self.train["input_ids"]), size=self.batch_size)
        inputs, labels = self._mask(self.train["input_ids"][idx], rng)
        return {"input_ids": inputs, "segment_ids": self.train["segment_ids"][idx],
                "attention_mask": self.train["attention_mask"][idx], "mlm_labels": labels,
                "nsp_labels": self.train["next_sentence_label"][idx]}

    def loss(self, model, batch):
        out = model(batch["input_ids"], batch["segment_ids"], batch["attention_mask"],
                    mlm_labels=batch["mlm_labels"], nsp_labels=batch["nsp_labels"])
        return out["loss"], {"tokens": int(batch["attention_mask"].sum())}

    def evaluate(self, model):
        sums = {"loss": 0.0, "mlm_loss": 0.0, "nsp_loss": 0.0}
        correct_mlm = n_mlm = correct_nsp = 0
        n = len(self.val_inputs)
        for i in range(0, n, 64):
            sl = slice(i, i + 64)
            labels = self.val_labels[sl]
            out = model(self.val_inputs[sl], self.val["segment_ids"][sl], self.val["attention_mask"][sl],
                        mlm_labels=labels, nsp_labels=self.val["next_sentence_label"][sl])
            w = len(labels) / n
            for k in sums:
                sums[k] += out[k].item() * w
            m = labels != -100
            correct_mlm += int((out["mlm_logits"].data.argmax(-1)[m] == labels[m]).sum())
            n_mlm += int(m.sum())
            correct_nsp += int((out["nsp_logits"].data.argmax(-1) == self.val["next_sentence_label"][sl]).sum())
        return {**sums, "mlm_accuracy": correct_mlm / max(n_mlm, 1), "nsp_accuracy": correct_nsp / n}

    def baselines(self):
        labels = self.val["next_sentence_label"]
        return {"most_frequent_token_accuracy": self.most_frequent.accuracy(self.val_labels),
                "unigram_loss": self.unigram.loss(self.val_labels, self.val_labels),   # the MLM loss of p(w)
                "nsp_majority_accuracy": float(max(labels.mean(), 1 - labels.mean()))}

    @staticmethod
    def describe(s) -> str:
        m, b = s["metrics"], s["baselines"]
        return (f"BERT: held-out loss {s['initial_loss']:.3f} -> {s['final_loss']:.3f} (MLM {m['mlm_loss']:.3f} + "
                f"NSP {m['nsp_loss']:.3f}) after {s['steps']} steps, {s['parameters']:,} parameters\n"
                f"MLM accuracy {m['mlm_accuracy']:.1%} vs most-frequent-token {b['most_frequent_token_accuracy']:.1%} "
                f"({100 * (m['mlm_accuracy'] - b['most_frequent_token_accuracy']):+.1f} points); "
                f"NSP accuracy {m['nsp_accuracy']:.1%} vs majority {b['nsp_majority_accuracy']:.1%}")

