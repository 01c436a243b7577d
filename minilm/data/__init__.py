"""minilm's data: the text every model trains on, and the arrays made from it.

No machine here reaches a model hub or a dataset host, so the kit makes its own data and reads any
text file a user gives it. One idea per file:

* ``seed.py``          — the six-sentence toy corpus of ``minilm demo`` (``SEED_SENTENCES``)
* ``lexicon.py``       — word tables: topics, singular/plural nouns and verbs, names, categories
* ``synthetic.py``     — the seeded synthetic corpus (topics, agreement, multi-token names) and probes
* ``downstream.py``    — labelled tasks: sentiment with negation, a three-class entailment task
* ``seq2seq_tasks.py`` — T5-style prefixed tasks: ``reverse: a b c`` -> ``c b a``
* ``corpus_file.py``   — a user's text file as documents of sentences (``--corpus FILE``), or the
                         shipped English text (``--corpus real``, in ``real/``)
* ``batching.py``      — padding, batches, GPT's next-token blocks, train/validation split
* ``packing.py``       — RoBERTa's FULL-SENTENCES / DOC-SENTENCES blocks (Task 6.1 slots)
* ``nsp.py``           — BERT's [CLS] A [SEP] B [SEP] pairs for NSP (Task 5.3 slots; one-sentence pairs)

Documents are ``list[list[str]]`` (documents of sentence strings) until a tokenizer turns them into
``list[list[list[int]]]`` (``encode_documents``); every random function takes ``rng``.
"""
from .seed import SEED_SENTENCES, seed_corpus
from .lexicon import (CATEGORIES, COLOURS, HYPERNYMS, MULTI_TOKEN_NAMES, NOUN_NUMBER, TOPIC_NAMES, TOPICS,
                      VERB_NUMBER, Topic, multi_token_names)
from .synthetic import (AgreementProbe, agreement_probes, documents_to_text, synthetic_corpus,
                        synthetic_document, synthetic_sentence, word_similarity_pairs)
from .downstream import (ENTAILMENT_LABELS, EntailmentExample, SentimentExample, entailment_dataset,
                         sentiment_dataset)
from .seq2seq_tasks import SEQ2SEQ_TASKS, seq2seq_dataset, seq2seq_target
from .corpus_file import REAL_CORPUS, corpus_path, encode_documents, read_corpus, split_sentences, write_corpus
from .batching import batches, lm_blocks, pad_batch, sample_lm_batch, train_val_split
from .packing import PACKING_MODES, pack_doc_sentences, pack_full_sentences, pack_sentences, roberta_blocks
from .nsp import NSPInstance, create_nsp_instances, nsp_arrays, sentence_pair_instances, truncate_seq_pair

__all__ = [
    "SEED_SENTENCES", "seed_corpus",
    "CATEGORIES", "COLOURS", "HYPERNYMS", "MULTI_TOKEN_NAMES", "NOUN_NUMBER", "TOPIC_NAMES", "TOPICS",
    "VERB_NUMBER", "Topic", "multi_token_names",
    "AgreementProbe", "agreement_probes", "documents_to_text", "synthetic_corpus", "synthetic_document",
    "synthetic_sentence", "word_similarity_pairs",
    "ENTAILMENT_LABELS", "EntailmentExample", "SentimentExample", "entailment_dataset", "sentiment_dataset",
    "SEQ2SEQ_TASKS", "seq2seq_dataset", "seq2seq_target",
    "REAL_CORPUS", "corpus_path", "encode_documents", "read_corpus", "split_sentences", "write_corpus",
    "batches", "lm_blocks", "pad_batch", "sample_lm_batch", "train_val_split",
    "PACKING_MODES", "pack_doc_sentences", "pack_full_sentences", "pack_sentences", "roberta_blocks",
    "NSPInstance", "create_nsp_instances", "nsp_arrays", "sentence_pair_instances", "truncate_seq_pair",
]
