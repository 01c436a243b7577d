"""minilm's tokenizers: characters, BERT's WordPiece, GPT-2 / RoBERTa byte-level BPE.

All three share one interface (``base.py``)::

    tok.tokenize(text) -> list[str]            tok.encode(text, add_special_tokens=False) -> list[int]
    tok.decode(ids, skip_special_tokens=False) tok.convert_tokens_to_ids / convert_ids_to_tokens
    tok.vocab_size   tok.token_to_id(t)   tok.id_to_token(i)   tok.special_ids
    tok.pad_id tok.unk_id tok.cls_id tok.sep_id tok.mask_id (None where absent; BPE: bos_id, eos_id)
    tok.save(directory)   Type.load(directory)  # plain text / JSON files

Files: ``char.py``, ``wordpiece.py`` (+ ``bert_chars.py``, ``wordpiece_trainer.py``), ``bpe.py``
(+ ``pretokenize.py``); the files released checkpoints ship: ``hf_json.py`` (``tokenizer.json``) and
``sentencepiece_model.py`` + ``spm_tokenizer.py`` (a SentencePiece ``.model``, Unigram or BPE). The
lessons (Task 5.1 WordPiece, Task 6.2 byte-level BPE) live in ``solutions/`` / ``exercises/`` and
are called through ``autograd.tasks``.
"""
from .base import BaseTokenizer
from .bpe import ByteLevelBPETokenizer
from .char import CharTokenizer
from .pretokenize import gpt2_pretokenize
from .spm_tokenizer import SentencePieceTokenizer
from .wordpiece import WordPieceTokenizer

__all__ = ["BaseTokenizer", "CharTokenizer", "WordPieceTokenizer", "ByteLevelBPETokenizer", "SentencePieceTokenizer",
           "gpt2_pretokenize"]
