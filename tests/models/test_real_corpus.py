"""``--corpus real``: the English text minilm ships (minilm/data/real/, the Jargon File 4.4.7 cleaned
by tools/make_real_corpus.py) — where it resolves, that it is running prose, that training reads it,
and that the tool rebuilds it byte for byte from the Debian package's text."""
import contextlib
import gzip
import io
import json
import os
import re
from pathlib import Path

import pytest

from autograd.errors import MiniLMError
from minilm.data import REAL_CORPUS, corpus_path, read_corpus, write_corpus

from .hf_fixture_tool import import_tool

SOURCES = [os.environ.get("MINILM_JARGON_SOURCE", ""), "/usr/share/doc/jargon-text/jargon.txt.gz"]
TABLE_START = re.compile(r"^[│┌├└┬┼┤┐┘─|+=*#>_\\/<-]")


@pytest.fixture(scope="module")
def text():
    with open(REAL_CORPUS, "rb") as f:
        return gzip.decompress(f.read()).decode("utf-8")


def test_real_resolves_to_the_shipped_file_and_reads_like_a_path():
    assert corpus_path("real") == REAL_CORPUS
    assert Path(REAL_CORPUS).is_file(), f"{REAL_CORPUS} is missing: run tools/make_real_corpus.py"
    assert Path(REAL_CORPUS).parent.joinpath("README.md").is_file(), "minilm/data/real/README.md is missing"
    assert corpus_path("runs/my.txt") == "runs/my.txt"          # any other word is a path
    assert read_corpus("real") == read_corpus(REAL_CORPUS)


def test_real_corpus_is_over_a_megabyte_of_prose(text):
    size, words = len(text.encode("utf-8")), len(text.split())
    assert size >= 1_000_000, f"the real corpus holds {size:,} bytes of text; expected at least 1 MB"
    assert words >= 150_000, f"the real corpus holds {words:,} words; expected at least 150,000"
    bad = [(i + 1, line[:80]) for i, line in enumerate(text.splitlines()) if line and (
        not re.search(r"[a-z]", line) or TABLE_START.match(line) or line != line.strip()
        or re.search(r"(?<!')[{}](?!')|[\u2500-\u257f]|https?://|\s{2}", line))]   # '}' is a character
    assert not bad, (f"{len(bad)} lines of the real corpus are not clean prose (no lowercase letter, a table or "
                     f"markup character, a URL, repeated spaces): first {bad[:5]}; is tools/make_real_corpus.py "
                     "dropping tables and cross-reference braces?")
    docs = read_corpus("real")
    assert len(docs) >= 2000 and sum(map(len, docs)) >= 10_000, (len(docs), sum(map(len, docs)))


def test_a_gz_file_reads_like_its_text_and_a_bad_one_is_named(tmp_path):
    docs = [["The cat sat.", "It purred."], ["Dogs bark."]]
    plain, packed = tmp_path / "c.txt", tmp_path / "c.txt.gz"
    write_corpus(docs, plain)
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    assert read_corpus(packed) == read_corpus(plain) == docs
    broken = tmp_path / "broken.txt.gz"
    broken.write_bytes(packed.read_bytes()[:20])
    with pytest.raises(MiniLMError, match=r"broken\.txt\.gz.*not a whole gzip file"):
        read_corpus(broken)


def test_every_corpus_option_offers_real():
    from minilm.experiments import available
    from minilm.recipes.common import CorpusConfig
    from minilm.recipes.config import field_comments, leaves
    helps = {"minilm train (CorpusConfig)": field_comments(CorpusConfig)["corpus"]}
    for name, module in available().items():
        if "corpus" in module.OPTIONS:   # its own field, or its recipe's (the class that declares it comments it)
            helps[f"minilm experiment {name}"] = field_comments(leaves(module.CONFIG)["corpus"][4])["corpus"]
    assert len(helps) >= 9, sorted(helps)
    missing = [where for where, h in helps.items() if '"real"' not in h]
    assert not missing, f"--corpus help that does not name the real corpus: {missing}"


def test_every_family_takes_corpus_or_says_why_it_reads_no_text():
    """``minilm train FAMILY --corpus real``: transformer-xl, which learns a recall task made fresh at every
    step, answers it with its reason (argparse alone would say "unrecognized arguments"); T5 and the prefix
    LM refuse it beside a toy --task, which would train on the task's pairs and leave the text unread. As a
    user types it."""
    import subprocess
    import sys
    from minilm.recipes import available
    from minilm.recipes.config import leaves
    without = {name: recipe for name, recipe in available().items() if "corpus" not in leaves(recipe.Config)}
    assert sorted(without) == ["transformer-xl"]
    commands = [["train", name, "--corpus", "real"] for name in without]
    commands += [["train", "t5", "--task", "reverse", "--corpus", "real", "--steps", "1"],
                 ["train", "prefixlm", "--corpus", "real", "--steps", "1"]]     # its default --task is reverse
    for command in commands:
        run = subprocess.run([sys.executable, "-m", "minilm.cli", *command], capture_output=True, text=True,
                             timeout=120)
        said = " ".join(run.stderr.split())
        assert run.returncode != 0 and "--corpus real" in said, run.stderr[-1000:]
        assert "Traceback" not in said and "unrecognized" not in said, said
        name = command[1]
        reason = {"t5": "then fine-tune that", "prefixlm": "makes its own pairs. Add --task span"}.get(name) or \
            sys.modules[without[name].__module__].NO_CORPUS
        assert reason[:60] in said, said


def test_train_gpt_on_the_real_corpus_runs(tmp_path, monkeypatch):
    """The whole path: the command line, the recipe's corpus, a tokenizer trained on the real text
    (a small vocabulary: WordPiece on 1.3 MB of text is most of the ~13 s), 3 steps."""
    from minilm.cli import main
    from minilm.recipes import common
    read = []
    monkeypatch.setattr(common, "read_corpus", lambda path: read.append(path) or read_corpus(path))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["train", "gpt", "--corpus", "real", "--steps", "3", "--vocab-size", "100",
                     "--json", "--no-progress", "--out", str(tmp_path)]) == 0
    assert read == ["real"], f"minilm train gpt --corpus real read {read}"
    summary = json.loads(out.getvalue())
    assert summary["steps"] == 3 and (tmp_path / "checkpoint.npz").is_file(), summary


def test_the_tool_rebuilds_the_shipped_file_byte_for_byte(tmp_path):
    source = next((Path(p) for p in SOURCES if p and Path(p).is_file()), None)
    if source is None:
        pytest.skip("the Jargon File 4.4.7 text is not here: apt-get download jargon-text, dpkg-deb -x, and "
                    "set MINILM_JARGON_SOURCE to its usr/share/doc/jargon-text/jargon.txt.gz")
    tool = import_tool("make_real_corpus")
    out = tmp_path / "rebuilt.txt.gz"
    assert tool.main([str(source), "--out", str(out)]) == 0
    shipped = Path(REAL_CORPUS).read_bytes()
    assert gzip.decompress(out.read_bytes()) == gzip.decompress(shipped), (
        "tools/make_real_corpus.py no longer writes the shipped text: run it and commit the new "
        "minilm/data/real/jargon-4.4.7.txt.gz (and update the sizes in its README.md)")
    assert out.read_bytes() == shipped, "same text, different gzip bytes: a different zlib? (mtime must be 0)"


@pytest.mark.slow
def test_gpt_vs_bert_quick_fits_the_real_corpus(tmp_path):
    """``minilm experiment gpt-vs-bert --quick --corpus real``: its smaller WordPiece vocabulary, trained
    on the real text, splits an entailment pair into more than 48 tokens; the quick seq_len holds it."""
    from minilm.experiments import gpt_vs_bert, settings_of
    from minilm.experiments.gpt_vs_bert_readouts import task_data
    settings = {**settings_of(gpt_vs_bert.CONFIG.quick()), "corpus": "real"}
    docs = gpt_vs_bert.pretraining_documents(settings, 0)
    recipe = gpt_vs_bert.build_recipe("gpt", settings, 0, gpt_vs_bert.write_corpus(docs, tmp_path / "c.txt"))
    data = task_data(recipe.tokenizer, settings, 0)                   # raised "raise --seq-len" at 48
    assert data["entailment"]["train"][0].shape[1] <= settings["seq_len"]
