"""minilm.tokenizers: the common interface, CharTokenizer, WordPieceTokenizer, ByteLevelBPETokenizer.

(The GPT-2 pre-tokenizer's exact rules are tested in test_tok_pretokenize.py.)
"""
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autograd.errors import ConfigError, TokenizerError
from minilm.tokenizers import ByteLevelBPETokenizer, CharTokenizer, WordPieceTokenizer

SENTENCES = ["cats eat fish", "dogs eat meat", "cats chase mice", "dogs chase cats",
             "birds eat seeds", "fish eat plankton"]
BERT_VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "##s", "un", "##aff", "##able",
              "!", ",", ".", "'", "hello", "world", "play", "##ing", "é", "x", "##x", "我", "a", "##a", "eat"]
BPE_CORPUS = ["the cat sat on the mat. the cats eat fish!", "it's new york, not los angeles.",
              "héllo wörld 😀 中文 ", "Numbers: 123 4567\n\n  indented\tline"] * 4


@pytest.fixture(scope="module")
def char_tok():
    return CharTokenizer.from_texts(SENTENCES)


@pytest.fixture(scope="module")
def wp_tok():
    return WordPieceTokenizer(BERT_VOCAB)


@pytest.fixture(scope="module")
def bpe_tok():
    return ByteLevelBPETokenizer.train(BPE_CORPUS, 330, min_frequency=2)


# ---- the common interface ---------------------------------------------------------------------
@pytest.mark.parametrize("name", ["char_tok", "wp_tok", "bpe_tok"])
def test_common_interface(name, request):
    tok = request.getfixturevalue(name)
    text = "cats eat"
    tokens = tok.tokenize(text)
    ids = tok.encode(text)
    assert tok.convert_tokens_to_ids(tokens) == ids
    assert tok.convert_ids_to_tokens(ids) == tokens
    assert all(tok.token_to_id(t) == i and tok.id_to_token(i) == t for t, i in zip(tokens, ids))
    assert len(tok) == tok.vocab_size and all(0 <= i < tok.vocab_size for i in ids)
    assert tok.special_ids == sorted(tok.special_ids) and tok.pad_id in tok.special_ids
    for attr in ("pad_id", "unk_id", "cls_id", "sep_id", "mask_id"):
        assert getattr(tok, attr) in tok.special_ids
    with_specials = tok.encode(text, add_special_tokens=True)
    assert with_specials[0] == tok.cls_id and with_specials[-1] == tok.sep_id
    assert tok.decode(with_specials, skip_special_tokens=True) == tok.decode(ids)
    assert tok.decode(np.array(ids)) == tok.decode(ids)  # a 1-D array works too


@pytest.mark.parametrize("name", ["char_tok", "wp_tok", "bpe_tok"])
@pytest.mark.parametrize("bad", [-1, -100, 10_000])
def test_out_of_range_ids_raise(name, bad, request):
    tok = request.getfixturevalue(name)
    with pytest.raises(TokenizerError, match=rf"id {bad} .*vocab_size = {tok.vocab_size}"):
        tok.decode([0, bad])
    with pytest.raises(TokenizerError, match=str(bad)):
        tok.id_to_token(bad)
    with pytest.raises(TokenizerError):
        tok.convert_ids_to_tokens(np.array([bad]))
    assert tok.decode([0])  # the valid call beside it works


@pytest.mark.parametrize("name", ["char_tok", "wp_tok", "bpe_tok"])
def test_ids_must_be_integers(name, request):
    tok = request.getfixturevalue(name)
    for bad in ([1.0], [True], ["3"], np.zeros((2, 2), dtype=int), "abc"):
        with pytest.raises(TokenizerError):
            tok.decode(bad)
    assert tok.decode(np.array([1, 2], dtype=np.int64)) == tok.decode([1, 2])
    with pytest.raises(TokenizerError, match="not in the vocabulary"):
        tok.token_to_id("no-such-token-♞")


@pytest.mark.parametrize("name", ["char_tok", "wp_tok", "bpe_tok"])
def test_save_load_round_trip(name, request, tmp_path):
    tok = request.getfixturevalue(name)
    tok.save(tmp_path / "tok")
    loaded = type(tok).load(tmp_path / "tok")
    assert loaded.get_vocab() == tok.get_vocab()
    assert loaded.special_ids == tok.special_ids and loaded.roles == tok.roles
    for text in SENTENCES + ["cats [MASK] fish"]:
        assert loaded.encode(text) == tok.encode(text)
    assert not any(p.suffix in (".pkl", ".pickle", ".npy") for p in (tmp_path / "tok").iterdir())
    json.loads((tmp_path / "tok" / "tokenizer_config.json").read_text(encoding="utf-8"))


# ---- CharTokenizer -------------------------------------------------------------------------------
def test_char_layout(char_tok):
    assert [char_tok.id_to_token(i) for i in range(5)] == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    assert (char_tok.pad_id, char_tok.unk_id, char_tok.cls_id, char_tok.sep_id, char_tok.mask_id) == (0, 1, 2, 3, 4)
    chars = sorted(set("".join(SENTENCES)))
    assert [char_tok.id_to_token(i) for i in range(5, char_tok.vocab_size)] == chars
    assert char_tok.special_ids == [0, 1, 2, 3, 4]
    explicit = CharTokenizer(list("tac "))
    assert explicit.convert_ids_to_tokens(range(5, 9)) == [" ", "a", "c", "t"]
    assert CharTokenizer(["b", "a", "a"], specials=()).get_vocab() == {"a": 0, "b": 1}


def test_char_round_trip_and_specials(char_tok):
    for s in SENTENCES:
        assert char_tok.decode(char_tok.encode(s)) == s
    ids = [char_tok.cls_id] + char_tok.encode("cats eat fish")  # as minilm demo does
    assert char_tok.decode(ids) == "[CLS]cats eat fish"
    assert char_tok.decode(ids, skip_special_tokens=True) == "cats eat fish"
    assert char_tok.tokenize("[CLS]cat[MASK]") == ["[CLS]", "c", "a", "t", "[MASK]"]
    ids, segments = char_tok.encode_pair("cat", "eat")
    assert ids == [2, *char_tok.encode("cat"), 3, *char_tok.encode("eat"), 3]
    assert segments == [0, 0, 0, 0, 0, 1, 1, 1, 1]


def test_char_unknown_characters(char_tok):
    with pytest.raises(TokenizerError, match=r"'Z' \(U\+005A\) at position 4.*'!' \(U\+0021\) at position 8"):
        char_tok.encode("cat Zeat!")
    assert char_tok.encode("cats eat") == char_tok.encode("cats eat")  # valid text beside it
    unk = CharTokenizer.from_texts(SENTENCES, unknown="unk")
    assert unk.encode("cZt") == [unk.token_to_id("c"), unk.unk_id, unk.token_to_id("t")]
    with pytest.raises(ConfigError):
        CharTokenizer.from_texts(SENTENCES, unknown="ignore")
    with pytest.raises(ConfigError):
        CharTokenizer.from_texts(SENTENCES, specials=("[PAD]",), unknown="unk")
    with pytest.raises(TokenizerError):
        CharTokenizer(["ab"])
    plain = CharTokenizer.from_texts(["ab\n"], specials=())
    assert plain.pad_id is None and plain.special_ids == [] and plain.encode("ba\n") == [2, 1, 0]
    with pytest.raises(TokenizerError, match="cls_token"):
        plain.encode("ab", add_special_tokens=True)


# ---- WordPieceTokenizer ----------------------------------------------------------------------------
def test_wordpiece_vocab_txt(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_text("\n".join(BERT_VOCAB) + "\n", encoding="utf-8")
    tok = WordPieceTokenizer.from_vocab_file(path)
    assert tok.vocab_size == len(BERT_VOCAB) and tok.id_to_token(5) == "the"
    assert (tok.pad_id, tok.unk_id, tok.cls_id, tok.sep_id, tok.mask_id) == (0, 1, 2, 3, 4)
    assert tok.tokenize("The cats, UNAFFABLE!") == ["the", "cat", "##s", ",", "un", "##aff", "##able", "!"]
    assert tok.tokenize("Playing xxx dogs") == ["play", "##ing", "x", "##x", "##x", "[UNK]"]
    assert tok.tokenize("É我") == ["[UNK]", "我"]  # "É" -> "e", which is not in the vocabulary
    assert tok.tokenize("é x") == ["[UNK]", "x"]  # ... even though "é" is
    # strip_accents=None follows do_lower_case; cased keeps the accent (and the case)
    cased = WordPieceTokenizer.from_vocab_file(path, do_lower_case=False)
    assert cased.tokenize("é The") == ["é", "[UNK]"]
    kept = WordPieceTokenizer.from_vocab_file(path, strip_accents=False)
    assert kept.tokenize("É") == ["é"]
    # HF reads vocab.txt with universal newlines; a missing final newline is fine
    path.write_text("\r\n".join(BERT_VOCAB), encoding="utf-8")
    assert WordPieceTokenizer.from_vocab_file(path).get_vocab() == tok.get_vocab()


def test_wordpiece_special_layout(wp_tok):
    assert wp_tok.encode("the cats", add_special_tokens=True) == [2, 5, 6, 7, 3]
    ids, segments = wp_tok.encode_pair("the cat", "hello world !")
    assert ids == [2, 5, 6, 3, 15, 16, 11, 3]
    assert segments == [0, 0, 0, 0, 1, 1, 1, 1]  # BERT: [CLS] A [SEP] -> 0; B [SEP] -> 1
    # special tokens in the text are kept whole (exact, case-sensitive)
    assert wp_tok.tokenize("the [MASK] cat[SEP]") == ["the", "[MASK]", "cat", "[SEP]"]
    assert wp_tok.tokenize("[mask]") == ["[UNK]", "[UNK]", "[UNK]"]  # "[", "mask", "]": not special


def test_wordpiece_decode(wp_tok):
    ids = wp_tok.encode("the cats, unaffable! hello world.", add_special_tokens=True)
    assert wp_tok.decode(ids) == "[CLS] the cats , unaffable ! hello world . [SEP]"
    assert wp_tok.decode(ids, skip_special_tokens=True, clean_up_tokenization_spaces=True) == \
        "the cats, unaffable! hello world."


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.characters() | st.integers(0xD800, 0xDFFF).map(chr), max_size=40))
def test_wordpiece_never_fails_on_any_text(text):  # surrogates included: BERT drops them (category Cs)
    tok = WordPieceTokenizer(BERT_VOCAB)
    ids = tok.encode(text, add_special_tokens=True)
    assert all(0 <= i < tok.vocab_size for i in ids)
    assert ids[0] == tok.cls_id and ids[-1] == tok.sep_id
    assert isinstance(tok.decode(ids), str)


# ---- ByteLevelBPETokenizer --------------------------------------------------------------------------
def test_byte_map_has_256_distinct_printable_characters(bpe_tok):
    chars = [bpe_tok.byte_encoder[b] for b in range(256)]
    assert len(set(chars)) == 256 and all(c.isprintable() and not c.isspace() for c in chars)
    assert bpe_tok.byte_encoder[32] == "Ġ" and bpe_tok.byte_encoder[10] == "Ċ"
    assert all(bpe_tok.byte_decoder[c] == b for b, c in enumerate(chars))


def test_bpe_layout(bpe_tok):
    assert [bpe_tok.id_to_token(i) for i in range(5)] == ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
    assert (bpe_tok.bos_id, bpe_tok.pad_id, bpe_tok.eos_id, bpe_tok.unk_id, bpe_tok.mask_id) == (0, 1, 2, 3, 4)
    assert (bpe_tok.cls_id, bpe_tok.sep_id) == (bpe_tok.bos_id, bpe_tok.eos_id)
    assert [bpe_tok.id_to_token(5 + b) for b in range(256)] == [bpe_tok.byte_encoder[b] for b in range(256)]
    merged = [a + b for a, b in bpe_tok.merges]
    assert [bpe_tok.id_to_token(i) for i in range(261, bpe_tok.vocab_size)] == merged
    assert bpe_tok.vocab_size == 330 and bpe_tok.special_ids == [0, 1, 2, 3, 4]


def test_bpe_special_layout_and_mask(bpe_tok):
    a, b = bpe_tok.encode("the cat"), bpe_tok.encode("a mat")
    assert bpe_tok.encode("the cat", add_special_tokens=True) == [0, *a, 2]
    assert bpe_tok.encode_pair("the cat", "a mat") == ([0, *a, 2, 2, *b, 2], [0] * (len(a) + len(b) + 4))
    tokens = bpe_tok.tokenize("the<mask> cat")
    assert "<mask>" in tokens and bpe_tok.encode("<mask>") == [bpe_tok.mask_id]
    assert bpe_tok.decode(bpe_tok.encode("x <s>y</s>")) == "x <s>y</s>"
    assert bpe_tok.decode(bpe_tok.encode("x <s>y</s>"), skip_special_tokens=True) == "x y"


def test_bpe_training_is_deterministic():
    first = ByteLevelBPETokenizer.train(BPE_CORPUS, 320)
    second = ByteLevelBPETokenizer.train(BPE_CORPUS, 320)
    shuffled = ByteLevelBPETokenizer.train(list(reversed(BPE_CORPUS)), 320)
    assert first.merges == second.merges == shuffled.merges
    assert first.get_vocab() == shuffled.get_vocab()
    assert first.merges[:3] == [("a", "t"), ("h", "e"), ("t", "he")]
    with pytest.raises(ConfigError, match="261"):
        ByteLevelBPETokenizer.train(BPE_CORPUS, 200)


@pytest.mark.parametrize("text", ["", "the cat", "héllo wörld", "😀👍🏽🇹🇼", "中文字", "e\u0301\u0302 combining",
                                  "\x00\x01\x7f\x85\xad controls", "line\r\nbreaks\n\n\t tabs  ", "it's they'll",
                                  "\ufffd\uffff\U0010ffff", "  leading and trailing  "])
def test_bpe_round_trip_examples(bpe_tok, text):
    ids = bpe_tok.encode(text)
    assert bpe_tok.decode(ids) == text
    assert bpe_tok.unk_id not in ids


# Any code point but a surrogate, with emoji (and their modifiers, joiners), CJK, combining marks,
# controls and odd whitespace drawn often.
ANY_TEXT = st.text(alphabet=st.characters(exclude_categories=["Cs"])
                   | st.sampled_from(list("😀👍🏽\u200d🇹🇼中文字\u0301\u0300\x00\x1b\x7f\x85\n\r\t \u3000éß")),
                   max_size=60)


@settings(max_examples=150, deadline=None)
@given(ANY_TEXT)
def test_bpe_round_trip_is_lossless_for_valid_unicode(text):
    tok = _shared_bpe()
    assert tok.decode(tok.encode(text)) == text


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=10), st.integers(0xD800, 0xDFFF), st.text(max_size=10))
def test_bpe_lone_surrogates_raise(before, surrogate, after):
    # A lone surrogate has no UTF-8 bytes: encode raises (naming the position) instead of guessing.
    text = before + chr(surrogate) + after
    with pytest.raises(TokenizerError, match=rf"U\+{surrogate:04X} at position {len(before)}"):
        _shared_bpe().encode(text)


def test_bpe_decode_of_invalid_utf8_replaces(bpe_tok):
    lone_continuation = bpe_tok.token_to_id(bpe_tok.byte_encoder[0x80])
    half_emoji = [bpe_tok.token_to_id(bpe_tok.byte_encoder[b]) for b in "😀".encode("utf-8")[:2]]
    assert bpe_tok.decode([lone_continuation]) == "\ufffd"
    assert "\ufffd" in bpe_tok.decode(half_emoji + bpe_tok.encode("ok"))


def test_bpe_files(bpe_tok, tmp_path):
    bpe_tok.save(tmp_path)
    lines = (tmp_path / "merges.txt").read_text(encoding="utf-8").split("\n")
    assert lines[0] == "#version: 0.2" and lines[1] == " ".join(bpe_tok.merges[0])
    vocab = json.loads((tmp_path / "vocab.json").read_text(encoding="utf-8"))
    assert vocab["Ġ"] == 5 + 32 and vocab["<mask>"] == 4
    loaded = ByteLevelBPETokenizer.from_files(tmp_path / "vocab.json", tmp_path / "merges.txt")
    assert loaded.merges == bpe_tok.merges and loaded.mask_id == 4
    text = "the cats eat fish 😀"
    assert loaded.encode(text) == bpe_tok.encode(text)
    (tmp_path / "merges.txt").write_text("#version: 0.2\na b c\n", encoding="utf-8")
    with pytest.raises(TokenizerError, match="line 2"):
        ByteLevelBPETokenizer.load(tmp_path)
    (tmp_path / "vocab.json").write_text('{"a": 0, "b": 2}', encoding="utf-8")
    with pytest.raises(TokenizerError, match="0..1"):
        ByteLevelBPETokenizer.load(tmp_path)


def test_bpe_gpt2_style_vocabulary_without_roberta_specials():
    byte_map = ByteLevelBPETokenizer.train([], 261).byte_encoder
    vocab = [byte_map[b] for b in range(256)] + ["Ġt", "<|endoftext|>"]
    tok = ByteLevelBPETokenizer(vocab, [("Ġ", "t")], roles={"eos_token": "<|endoftext|>", "bos_token": "<|endoftext|>"})
    assert tok.encode(" t<|endoftext|>") == [256, 257] and tok.pad_id is None and tok.special_ids == [257]
    assert tok.decode([256, 257]) == " t<|endoftext|>"


_BPE = None


def _shared_bpe():
    global _BPE
    if _BPE is None:
        _BPE = ByteLevelBPETokenizer.train(BPE_CORPUS, 330, min_frequency=2)
    return _BPE
