"""minilm.data: corpus files, batching, and the library side of packing and NSP (non-graded)."""
import numpy as np
import pytest

from autograd.errors import MiniLMError, ShapeError
from minilm import data

# ----------------------------------------------------------------------------- corpus files


def test_read_corpus_documents_and_sentences(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_text("The cat sat. It slept!\nA second line\n\n\n  \t\nthe dog runs . the dog sleeps .\n"
                    "   \nlast doc?  Yes.\n", encoding="utf-8")
    assert data.read_corpus(path) == [
        ["The cat sat.", "It slept!", "A second line"],
        ["the dog runs .", "the dog sleeps ."],
        ["last doc?", "Yes."],
    ]
    assert data.read_corpus(str(path)) == data.read_corpus(path)
    # a byte-order mark and Windows line ends are fine
    bom = tmp_path / "bom.txt"
    bom.write_bytes(b"\xef\xbb\xbfone.\r\ntwo.\r\n\r\nthree.\r\n")
    assert data.read_corpus(bom) == [["one.", "two."], ["three."]]


def test_write_corpus_round_trip(tmp_path):
    docs = data.synthetic_corpus(5, rng=np.random.default_rng(0))
    data.write_corpus(docs, tmp_path / "c.txt")
    assert data.read_corpus(tmp_path / "c.txt") == docs
    assert (tmp_path / "c.txt").read_text(encoding="utf-8") == data.documents_to_text(docs)
    with pytest.raises(MiniLMError, match="no sentences"):
        data.write_corpus([], tmp_path / "d.txt")
    with pytest.raises(MiniLMError, match="line breaks"):
        data.write_corpus([["a\nb"]], tmp_path / "d.txt")


@pytest.mark.parametrize("content", [b"", b"   \n\n\t \n"], ids=["empty", "whitespace"])
def test_read_corpus_empty_file(tmp_path, content):
    path = tmp_path / "empty.txt"
    path.write_bytes(content)
    with pytest.raises(MiniLMError, match="holds no text") as e:
        data.read_corpus(path)
    assert str(path) in str(e.value)


def test_read_corpus_not_utf8(tmp_path):
    path = tmp_path / "latin1.txt"
    path.write_bytes("caf\u00e9 au lait.\n".encode("latin-1"))
    with pytest.raises(MiniLMError, match="not UTF-8") as e:
        data.read_corpus(path)
    assert str(path) in str(e.value) and "offset 3" in str(e.value) and "0xe9" in str(e.value)
    bom = tmp_path / "bom_latin1.txt"
    bom.write_bytes(b"\xef\xbb\xbfab\xff")
    with pytest.raises(MiniLMError, match="offset 5"):
        data.read_corpus(bom)


def test_read_corpus_missing_file_and_directory(tmp_path):
    with pytest.raises(MiniLMError, match="no such file") as e:
        data.read_corpus(tmp_path / "nope.txt")
    assert "nope.txt" in str(e.value)
    with pytest.raises(MiniLMError, match="directory"):
        data.read_corpus(tmp_path)


def test_split_sentences_and_encode_documents():
    assert data.split_sentences("  a b. c d?  e!f g ") == ["a b.", "c d?", "e!f g"]
    assert data.split_sentences("   ") == []
    vocab = {"a": 1, "b": 2}
    docs = data.encode_documents([["a b", "zz"], ["zz"], ["b"]],
                                 lambda s: [vocab[w] for w in s.split() if w in vocab])
    assert docs == [[[1, 2]], [[2]]]


# ----------------------------------------------------------------------------- batching

def test_pad_batch_right_padding():
    ids, mask = data.pad_batch([[5, 6, 7], [8], np.array([9, 10])], pad_id=0)
    assert ids.dtype == np.int64 and mask.dtype == bool and ids.shape == mask.shape == (3, 3)
    assert ids.tolist() == [[5, 6, 7], [8, 0, 0], [9, 10, 0]]
    assert mask.tolist() == [[True, True, True], [True, False, False], [True, True, False]]
    ids, mask = data.pad_batch([[1], []], pad_id=-100, max_len=4)
    assert ids.tolist() == [[1, -100, -100, -100], [-100] * 4] and mask.sum() == 1


def test_pad_batch_too_long_raises_or_truncates():
    with pytest.raises(ShapeError, match="sequence 1 has 5 ids, more than max_len=3"):
        data.pad_batch([[1], [1, 2, 3, 4, 5]], pad_id=0, max_len=3)
    ids, mask = data.pad_batch([[1], [1, 2, 3, 4, 5]], pad_id=0, max_len=3, truncate=True)
    assert ids.tolist() == [[1, 0, 0], [1, 2, 3]] and mask.all(axis=1).tolist() == [False, True]
    with pytest.raises(ShapeError, match="no sequences"):
        data.pad_batch([], pad_id=0)
    with pytest.raises(ShapeError, match="integer ids"):
        data.pad_batch([[0.5, 1.0]], pad_id=0)
    with pytest.raises(ShapeError, match="integer ids"):
        data.pad_batch([[[1, 2]]], pad_id=0)


def test_batches_cover_an_epoch():
    rng = np.random.default_rng(0)
    got = list(data.batches(10, 3, rng=rng))
    assert [len(b) for b in got] == [3, 3, 3, 1]
    assert sorted(np.concatenate(got).tolist()) == list(range(10))
    assert [b.tolist() for b in data.batches(7, 3, shuffle=False)] == [[0, 1, 2], [3, 4, 5], [6]]
    assert [len(b) for b in data.batches(7, 3, shuffle=False, drop_last=True)] == [3, 3]
    a = [b.tolist() for b in data.batches(50, 8, rng=np.random.default_rng(1))]
    assert a == [b.tolist() for b in data.batches(50, 8, rng=np.random.default_rng(1))]
    assert a != [b.tolist() for b in data.batches(50, 8, rng=np.random.default_rng(2))]
    with pytest.raises(MiniLMError, match="needs rng"):
        next(data.batches(5, 2))
    with pytest.raises(MiniLMError, match="batch_size"):
        next(data.batches(5, 0, shuffle=False))


def test_lm_blocks_shift_by_one():
    ids = np.arange(23)
    x, y = data.lm_blocks(ids, 5)
    assert x.shape == y.shape == (4, 5) and x.dtype == np.int64
    assert np.array_equal(y, x + 1)             # y[t] = x[t + 1] in the stream
    assert np.array_equal(x[:, 1:], y[:, :-1])  # and inside a block
    assert x[1, 0] == 5                          # blocks do not overlap
    assert data.lm_blocks([3, 4], 1)[0].tolist() == [[3]]
    with pytest.raises(ShapeError, match="too short"):
        data.lm_blocks(np.arange(5), 5)
    with pytest.raises(MiniLMError, match="negative"):
        data.lm_blocks([1, -2, 3], 1)


def test_sample_lm_batch():
    ids = np.arange(100) * 2
    x, y = data.sample_lm_batch(ids, 8, 16, rng=np.random.default_rng(0))
    assert x.shape == y.shape == (16, 8)
    assert np.array_equal(y, x + 2) and x.max() <= 198 and y.max() <= 198
    with pytest.raises(ShapeError):
        data.sample_lm_batch(np.arange(8), 8, 2, rng=np.random.default_rng(0))


def test_train_val_split():
    items = [f"doc{i}" for i in range(20)]
    train, val = data.train_val_split(items, val_fraction=0.25)
    assert train == items[:15] and val == items[15:]
    train, val = data.train_val_split(items, val_fraction=0.25, rng=np.random.default_rng(0))
    assert len(val) == 5 and sorted(train + val) == sorted(items) and train != items[:15]
    stream = np.arange(100)
    tr, va = data.train_val_split(stream, val_fraction=0.1, rng=np.random.default_rng(0))
    assert np.array_equal(tr, np.arange(90)) and np.array_equal(va, np.arange(90, 100))
    assert [len(p) for p in data.train_val_split([1, 2], val_fraction=0.01)] == [1, 1]
    with pytest.raises(MiniLMError):
        data.train_val_split([1], val_fraction=0.5)
    with pytest.raises(MiniLMError):
        data.train_val_split([1, 2, 3], val_fraction=1.0)


# ----------------------------------------------------------------------------- packing (library)

def test_pack_sentences_and_roberta_blocks():
    docs = [[[5, 6], [7, 8, 9]], [[10, 11, 12]]]
    assert data.pack_sentences(docs, 5, mode="full", sep_id=2) == [[5, 6, 7, 8, 9], [2, 10, 11, 12]]
    assert data.pack_sentences(docs, 5, mode="doc") == [[5, 6, 7, 8, 9], [10, 11, 12]]
    blocks = data.roberta_blocks(docs, 6, bos_id=0, sep_id=2)
    assert blocks == [[0, 5, 6, 7, 8, 9], [0, 2, 10, 11, 12]] and max(map(len, blocks)) <= 6
    assert data.pack_full_sentences([[np.array([3, 4])], [], [[]], [[5]]], 8, 1) == [[3, 4, 1, 5]]
    with pytest.raises(MiniLMError, match="sep_id"):
        data.pack_sentences(docs, 5, mode="full")
    with pytest.raises(MiniLMError, match="mode"):
        data.pack_sentences(docs, 5, mode="eos")
    with pytest.raises(MiniLMError, match="block_size"):
        data.pack_doc_sentences(docs, 0)
    with pytest.raises(MiniLMError, match="negative"):
        data.pack_full_sentences([[[1, -1]]], 4, 0)


def test_packing_a_tokenised_synthetic_corpus():
    docs = data.synthetic_corpus(30, rng=np.random.default_rng(0))
    vocab = {}
    ids = data.encode_documents(docs, lambda s: [vocab.setdefault(w, len(vocab) + 3) for w in s.split()])
    full = data.pack_full_sentences(ids, 64, 2)
    doc = data.pack_doc_sentences(ids, 64)
    n_tokens = sum(len(s) for d in ids for s in d)
    assert sum(map(len, full)) == n_tokens + len(ids) - 1
    assert sum(map(len, doc)) == n_tokens
    assert len(full) < len(doc) and all(len(b) <= 64 for b in full + doc)


# ----------------------------------------------------------------------------- NSP (library)

def test_nsp_instances_of_the_synthetic_corpus_and_arrays():
    docs = data.synthetic_corpus(40, rng=np.random.default_rng(0))
    vocab = {"[PAD]": 0, "[CLS]": 1, "[SEP]": 2}
    ids = data.encode_documents(docs, lambda s: [vocab.setdefault(w, len(vocab)) for w in s.split()])
    out = data.create_nsp_instances(ids, max_seq_length=32, rng=np.random.default_rng(0), cls_id=1, sep_id=2)
    assert len(out) >= 40 and all(isinstance(i, data.NSPInstance) for i in out)
    assert {i.next_sentence_label for i in out} == {0, 1}
    arrays = data.nsp_arrays(out, max_seq_length=32)
    B = len(out)
    for key in ("input_ids", "segment_ids", "attention_mask"):
        assert arrays[key].shape == (B, 32)
    assert arrays["next_sentence_label"].tolist() == [int(i.is_random_next) for i in out]
    lengths = arrays["attention_mask"].sum(axis=1)
    assert lengths.tolist() == [len(i.input_ids) for i in out]
    pad = ~arrays["attention_mask"]
    assert (arrays["input_ids"][pad] == 0).all() and (arrays["segment_ids"][pad] == 0).all()
    assert data.nsp_arrays(out)["input_ids"].shape[1] == max(lengths)
    with pytest.raises(MiniLMError, match="more than max_seq_length"):
        data.nsp_arrays(out, max_seq_length=8)
    with pytest.raises(MiniLMError, match="no instances"):
        data.nsp_arrays([])


def test_nsp_argument_checks():
    rng = np.random.default_rng(0)
    two = [[[3, 4], [5]], [[6, 7]]]
    with pytest.raises(MiniLMError, match="at least 2"):
        data.create_nsp_instances([[[3, 4], [5]], [[]], []], max_seq_length=16, rng=rng, cls_id=1, sep_id=2)
    with pytest.raises(MiniLMError, match="max_seq_length"):
        data.create_nsp_instances(two, max_seq_length=4, rng=rng, cls_id=1, sep_id=2)
    with pytest.raises(MiniLMError, match="cls_id"):
        data.create_nsp_instances(two, max_seq_length=16, rng=rng)
    with pytest.raises(MiniLMError, match="negative"):
        data.create_nsp_instances([[[3, -4]], [[5]]], max_seq_length=16, rng=rng, cls_id=1, sep_id=2)
    # the seed corpus, tokenised by words, gives pairs too
    vocab = {}
    seed = data.encode_documents(data.seed_corpus(),
                                 lambda s: [vocab.setdefault(w, len(vocab) + 3) for w in s.split()])
    out = data.create_nsp_instances(seed, max_seq_length=16, rng=rng, cls_id=1, sep_id=2)
    assert all(len(i.input_ids) <= 16 for i in out) and len(out) >= 3
