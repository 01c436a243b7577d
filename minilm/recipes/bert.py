"""BERT: masked-LM + next-sentence prediction on [CLS] A [SEP] B [SEP] pairs.

L = L_MLM + L_NSP. The masked LM predicts ~15% of tokens (80% [MASK], 10% random, 10% kept) from
both sides; NSP classifies from the pooled [CLS] whether B followed A (IsNext) or came from another
document (NotNext). The summary compares held-out MLM accuracy with always predicting the most
frequent token, and NSP accuracy with chance (50%).
"""
from __future__ import annotations

import numpy as np

from minilm.recipes.common import add_corpus_arguments, load_documents, texts

TRAIN_DEFAULTS = {"steps": 2000, "lr": 3e-3, "warmup": 80, "eval_every": 200, "checkpoint_every": 200}


def add_arguments(p):
    add_corpus_arguments(p)
    p.add_argument("--max-seq-length", type=int, default=48, help="tokens per pair (default 48)")
    p.add_argument("--n-layer", type=int, default=2, help="encoder layers (default 2)")
    p.add_argument("--n-head", type=int, default=4, help="attention heads (default 4)")
    p.add_argument("--n-embd", type=int, default=64, help="model width (default 64)")
    p.add_argument("--batch-size", type=int, default=32, help="pairs per step (default 32)")
    p.add_argument("--vocab-size", type=int, default=400, help="WordPiece vocabulary size (default 400)")
    p.add_argument("--dropout", type=float, default=0.0, help="dropout probability (default 0)")
    p.add_argument("--whole-word-mask", action="store_true",
                   help="mask whole words: a ## piece is masked with its word (BERT's do_whole_word_mask, Task 12.2)")
    p.add_argument("--dupe-factor", type=int, default=5,
                   help="passes over the corpus when building NSP pairs (BERT's dupe_factor; default 5)")


class BertRecipe:
    family = "bert"

    def __init__(self, args):
        from minilm.downstream.baselines import MostFrequentToken
        from minilm.data import create_nsp_instances, encode_documents, nsp_arrays
        from minilm.models.bert import BertConfig, BertForPreTraining
        from minilm.tokenizers import WordPieceTokenizer
        train_docs, val_docs = load_documents(args)
        tok = self.tokenizer = WordPieceTokenizer.train(texts(train_docs), args.vocab_size)
        rng = np.random.default_rng([args.seed, 777])

        def pairs(docs, passes):
            ids = encode_documents(docs, tok.encode)
            inst = [i for _ in range(passes) for i in create_nsp_instances(
                ids, max_seq_length=args.max_seq_length, rng=rng, cls_id=tok.cls_id, sep_id=tok.sep_id)]
            return nsp_arrays(inst, max_seq_length=args.max_seq_length, pad_id=tok.pad_id)

        self.train = pairs(train_docs, args.dupe_factor)
        self.val = pairs(val_docs, 2)
        self.special = [tok.pad_id, tok.cls_id, tok.sep_id]
        self.whole_word = getattr(args, "whole_word_mask", False)
        # one fixed mask of the held-out pairs, so evaluations are comparable across steps
        self.val_inputs, self.val_labels = self._mask(self.val["input_ids"], np.random.default_rng([args.seed, 99]))
        self.batch_size = args.batch_size
        self.model_config = BertConfig(vocab_size=tok.vocab_size, max_position_embeddings=args.max_seq_length,
                                       n_layer=args.n_layer, n_head=args.n_head, n_embd=args.n_embd,
                                       dropout=args.dropout)
        self.model = BertForPreTraining(self.model_config, rng=np.random.default_rng(args.seed))
        self.most_frequent = MostFrequentToken().fit(self.train["input_ids"], ignore_ids=self.special)

    def _mask(self, ids, rng):
        from minilm.corruption import mask_tokens, mask_tokens_wwm
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
                "nsp_majority_accuracy": float(max(labels.mean(), 1 - labels.mean()))}


def build(args):
    return BertRecipe(args)


def describe(s) -> str:
    m, b = s["metrics"], s["baselines"]
    return (f"BERT: held-out loss {s['initial_loss']:.3f} -> {s['final_loss']:.3f} (MLM {m['mlm_loss']:.3f} + "
            f"NSP {m['nsp_loss']:.3f}) after {s['steps']} steps, {s['parameters']:,} parameters\n"
            f"MLM accuracy {m['mlm_accuracy']:.1%} vs most-frequent-token {b['most_frequent_token_accuracy']:.1%} "
            f"({100 * (m['mlm_accuracy'] - b['most_frequent_token_accuracy']):+.1f} points); "
            f"NSP accuracy {m['nsp_accuracy']:.1%} vs majority {b['nsp_majority_accuracy']:.1%}")
