"""The documentation stays consistent: README.md and its Traditional Chinese twin README.zh-TW.md
give the same commands, every translated task page (docs/tasks/zh-TW/) keeps its English page's
structure and code, and no relative link points at a missing file.

Plain text processing only (no network, no imports of the kit): the whole file runs in well under
a second.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README, README_ZH = ROOT / "README.md", ROOT / "README.zh-TW.md"
TASKS, TASKS_ZH = ROOT / "docs" / "tasks", ROOT / "docs" / "tasks" / "zh-TW"
COMMAND_WORDS = ("minilm", "pytest", "python", "pip")

FENCE = re.compile(r"^```[^\n]*\n(.*?)^```[ \t]*$", re.S | re.M)
INLINE = re.compile(r"`([^`\n]+)`")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def fenced_blocks(text: str) -> list[str]:
    """The contents of the ``` fenced code blocks, in order."""
    return FENCE.findall(text)


def without_fences(text: str) -> str:
    return FENCE.sub("", text)


def indented_blocks(text: str) -> list[str]:
    """Indented (4+ spaces) code blocks outside fences that follow a blank line: the formulas."""
    blocks, current, previous_blank = [], [], True
    for line in without_fences(text).splitlines():
        if line.startswith("    ") and (current or previous_blank):
            current.append(line.rstrip())
        elif current and not line.strip():
            current.append("")
        else:
            if current:
                blocks.append("\n".join(current).strip("\n"))
                current = []
        previous_blank = not line.strip()
    if current:
        blocks.append("\n".join(current).strip("\n"))
    return blocks


def inline_commands(text: str) -> set[str]:
    """Backticked spans outside code blocks that start with a command word."""
    spans = INLINE.findall(without_fences(text))
    return {s.strip() for s in spans if s.strip().split(" ", 1)[0] in COMMAND_WORDS}


def headings(text: str) -> list[str]:
    return [line for line in without_fences(text).splitlines() if re.match(r"#{1,6} ", line)]


def markdown_files() -> list[Path]:
    files = [README, README_ZH] + sorted((ROOT / "docs").rglob("*.md"))
    return [f for f in files if f.exists()]


def task_pairs() -> list[tuple[Path, Path]]:
    return [(en, TASKS_ZH / en.name) for en in sorted(TASKS.glob("[0-9][0-9]-*.md"))
            if (TASKS_ZH / en.name).exists()]


# -- README.md and README.zh-TW.md -----------------------------------------------------------------

def test_readmes_link_to_each_other():
    assert read(README).splitlines()[0] == "[繁體中文](README.zh-TW.md)"
    assert read(README_ZH).splitlines()[0] == "[English](README.md)"


def test_readmes_have_the_same_code_blocks():
    en, zh = fenced_blocks(read(README)), fenced_blocks(read(README_ZH))
    assert en == zh, "README.zh-TW.md must repeat README.md's code blocks unchanged and in order"


def test_readmes_give_the_same_inline_commands():
    en, zh = inline_commands(read(README)), inline_commands(read(README_ZH))
    assert en, "no inline commands found in README.md: the extraction is broken"
    assert not en - zh, f"commands of README.md missing from README.zh-TW.md: {sorted(en - zh)}"
    assert not zh - en, f"commands of README.zh-TW.md missing from README.md: {sorted(zh - en)}"


# -- the task pages and their translations ---------------------------------------------------------

@pytest.mark.parametrize("en,zh", task_pairs(), ids=lambda p: p.name)
def test_translated_task_page_keeps_the_structure(en, zh):
    en_text, zh_text = read(en), read(zh)
    assert len(headings(en_text)) == len(headings(zh_text)), (
        f"{zh.name}: {len(headings(zh_text))} headings, the English page has {len(headings(en_text))}")
    assert fenced_blocks(en_text) == fenced_blocks(zh_text), f"{zh.name}: the code blocks differ"
    assert indented_blocks(en_text) == indented_blocks(zh_text), f"{zh.name}: the formulas differ"
    assert inline_commands(en_text) == inline_commands(zh_text), f"{zh.name}: the inline commands differ"


def test_every_translation_has_an_english_page():
    if not TASKS_ZH.exists():
        pytest.skip("no translated task pages yet")
    orphans = [p.name for p in TASKS_ZH.glob("*.md") if not (TASKS / p.name).exists()]
    assert not orphans, f"docs/tasks/zh-TW/ pages without an English page: {orphans}"


# -- links -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("path", markdown_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_point_to_existing_files(path):
    broken = []
    for target in LINK.findall(without_fences(read(path))):
        if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue                                        # http(s)://, mailto:, in-page anchors
        file_part = target.split("#", 1)[0]
        if not (path.parent / file_part).exists():
            broken.append(target)
    assert not broken, f"{path.relative_to(ROOT)}: links to missing files {broken}"


# -- the helpers themselves (a check that cannot pass vacuously) -----------------------------------

def test_extraction_helpers():
    text = ("# A\n\nrun `minilm demo` or `pytest -m slow`, not `x = 1`\n\n    L = a + b\n\n"
            "```\nminilm train t5\n```\n## B\n[x](nowhere.md)\n")
    assert headings(text) == ["# A", "## B"]
    assert inline_commands(text) == {"minilm demo", "pytest -m slow"}
    assert fenced_blocks(text) == ["minilm train t5\n"]
    assert indented_blocks(text) == ["    L = a + b"]
    assert LINK.findall(text) == ["nowhere.md"]


def test_readme_experiment_tables_match_the_last_runs():
    """README.md and README.zh-TW.md show docs/experiments/NAME.md's tables as the runs wrote them
    (tools/sync_experiment_tables.py copies them), and every registered experiment has its block."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("sync_tables", ROOT / "tools" / "sync_experiment_tables.py")
    sync_tables = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sync_tables)
    if "<!-- experiment:" not in read(README):
        pytest.skip("this README shows no experiment tables (a student release writes its own README)")
    registry = read(ROOT / "minilm" / "experiments" / "__init__.py")
    names = re.findall(r'^\s+"([a-z0-9-]+)": "minilm\.experiments\.', registry, re.M)
    assert len(names) >= 7
    for readme in (README, README_ZH):
        text = read(readme)
        assert sync_tables.sync(text) == text, f"{readme.name}: run python tools/sync_experiment_tables.py"
        shown = set(m.group(2) for m in sync_tables.BLOCK.finditer(text))
        assert shown == set(names), f"{readme.name}: experiment blocks {sorted(shown)} vs registry {sorted(names)}"
