"""Every `minilm ...` command a page tells a reader to type is one the command line accepts as
written: its subcommand, its family or experiment, and each of its options (a renamed option, such
as --generator-fraction becoming --generator-hidden-fraction, must take its pages with it).

The commands are the lines of the pages' code blocks that start with ``minilm `` (README.md,
README.zh-TW.md, docs/**/*.md); they are parsed by minilm's own parser, not run. A line with a
placeholder (FAMILY, NAME, <...>, ...) is a pattern, not a command, and is left out."""
from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from minilm.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", ROOT / "README.zh-TW.md", *sorted((ROOT / "docs").rglob("*.md"))]
PLACEHOLDER = re.compile(r"\b[A-Z]{3,}\b|<[^>]*>|\.\.\.|…")


def code_block_commands(text: str) -> list[str]:
    """The ``minilm ...`` lines of the fenced code blocks of a Markdown page, comments and line
    continuations resolved."""
    out, inside, pending = [], False, ""
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            inside, pending = not inside, ""
            continue
        if not inside:
            continue
        line = pending + line.strip()
        if line.endswith("\\"):
            pending = line[:-1] + " "
            continue
        pending = ""
        words = shlex.split(line, comments=True, posix=True) if line.startswith("minilm ") else []
        command: list = []
        for word in words + ["&&"]:                 # `a && b`, `a; b`, `a | b`: each minilm command alone
            if word in ("&&", ";", "|", "||"):
                if len(command) > 1 and command[0] == "minilm" and re.match(r"[a-z-]", command[1]):
                    out.append(command)
                command = []
            else:
                command.append(word)
    return [" ".join(shlex.quote(w) for w in words) for words in out]


def documented() -> list[tuple[str, str]]:
    found = []
    for page in PAGES:
        for cmd in code_block_commands(page.read_text(encoding="utf-8")):
            if not PLACEHOLDER.search(cmd.replace("--impl", "")):
                found.append((str(page.relative_to(ROOT)), cmd))
    return found


COMMANDS = documented()


def test_the_pages_have_commands_to_check():
    assert len(COMMANDS) > 50, COMMANDS
    assert code_block_commands("```bash\nminilm train gpt \\\n  --steps 3   # a comment\n```\nminilm no") == \
        ["minilm train gpt --steps 3"]
    assert code_block_commands("```\nminilm train bert && minilm embed --json\nminilm 125.1 270.4\n```") == \
        ["minilm train bert", "minilm embed --json"]


@pytest.fixture(scope="module")
def parser():
    return build_parser()


@pytest.mark.parametrize("page,command", COMMANDS, ids=[f"{p}:{c}" for p, c in COMMANDS])
def test_a_documented_command_parses(parser, page, command, capsys):
    words = shlex.split(command)[1:]
    if "--help" in words or "-h" in words:
        words = [w for w in words if w not in ("--help", "-h")]
    try:
        parser.parse_args(words)
    except SystemExit:
        pytest.fail(f"{page} tells readers to type `{command}`, which minilm refuses:\n"
                    f"{capsys.readouterr().err.strip()}")


def test_an_option_must_be_spelt_out(parser, capsys):
    """--checkpoint is not --checkpoint-every: a prefix is refused, not taken for the option it begins."""
    with pytest.raises(SystemExit):
        parser.parse_args(["train", "bert", "--checkpoint", "runs/bert/checkpoint.npz"])
    assert "unrecognized arguments: --checkpoint" in capsys.readouterr().err
