#!/usr/bin/env python3
"""Write minilm's real English corpus (``--corpus real``) from the Jargon File 4.4.7.

    apt-get download jargon-text && dpkg-deb -x jargon-text_4.4.7-*_all.deb /tmp/jg
    python tools/make_real_corpus.py /tmp/jg/usr/share/doc/jargon-text/jargon.txt.gz

The source. The Jargon File, version 4.4.7 (29 Dec 2003), edited by Eric S. Raymond: the Debian
package ``jargon-text`` (4.4.7-4.1) ships it as ``/usr/share/doc/jargon-text/jargon.txt.gz``, the
plain-text rendering of http://www.catb.org/~esr/jargon/ (jargsrc.tar.gz). Its licence: "This
document (the Jargon File) is in the public domain, to be freely used, shared, and modified", with
the request to cite it as "Jargon File 4.4.7" (minilm/data/real/README.md quotes it whole).

The cleaning keeps running prose and nothing else (deterministic: no randomness, no set order).
The text (no-break spaces made plain) is read as blocks, runs of non-blank lines; a block is

1. a heading — one line at column 0-2 ("Chapter 4. Jargon Construction", "  A", "Glossary") or
   centred (indent >= 10, "Part II. The Jargon Lexicon"), or a lexicon headword line
   (":ABEND: /a´bend/, /@·bend´/, n."): dropped, and it starts a new document;
2. a paragraph — every line at one indent (a list item, "• " or "12. ", may hang its other lines
   under its text): its lines are joined with single spaces and it is kept if, cleaned, it is prose;
3. anything else (tables, code, ASCII art, quoted mail, verse mixed with displays): dropped.

Dropped whole: everything before "Chapter 1" (title, table of contents, the glyph table, the
welcome page), the lexicon's index lists (in Part II, every block outside an entry: the Glossary
list and each letter's list before its first headword), the one-line entries of every "Table of
Contents", the Crunchly cartoons' "(The next cartoon in the Crunchly saga is ...)" captions, and
the Bibliography's citations ("[Levy] Hackers. Steven Levy. ... ISBN ..."; its reviews stay).

Inside a paragraph, in order: ‘’ “” become ' ", an em dash "--", "…" "..."; {cross-reference}
braces are removed, keeping the words ("{{VAX}}" too), and so is a stray brace; a paragraph that is
one [editor's note] loses its brackets; then, while one is at the start: a bullet or sense number
("2. "), a part of speech ("n. ", "vt. "), a [usage/etymology] label ("[Usenet] ", "[from the Unix
null device, used as a data sink] "), a pronunciation ("/kluhj/ "), and punctuation a label left;
editors' initials ("--ESR]") go; other brackets around words are removed, keeping the words
("[nt]roff" stays); pronunciations inside the text ("/gaw'bl/"), "ISBN ..." numbers and
<addresses> go; runs of whitespace become one space; a sentence still holding a URL or an e-mail
address is dropped. The paragraph is prose if it has >= 3 words and a lowercase letter, starts with
a letter, digit, quote, "(" or "$" (not "> quoted mail", "#ifdef", "<flame>"), ends a sentence
(. ! ? or :, before closing quotes or brackets) or has >= 12 words and a sentence end inside, and
>= 97% of its characters are letters, digits, spaces or ordinary punctuation (this drops code,
arithmetic, arrow lists and box-drawn tables).

The output: one paragraph a line, a blank line between documents (a lexicon entry, or a chapter
section), written as gzip with mtime 0 and no file name, so that a rebuild is byte-identical. It is
what ``minilm.data.read_corpus`` reads (one or more sentences a line, documents between blank lines).
"""
from __future__ import annotations

import argparse
import gzip
import io
import re
import sys
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "minilm" / "data" / "real" / "jargon-4.4.7.txt.gz"

START = "Chapter 1. Hacker Slang and Hacker Culture"
HEADWORD = re.compile(r"^:[^:]+:")                       # ":ABEND: /a´bend/, n."
MARKER = r"(?:[•*-]|\d+\.|\(?[a-z0-9]\))\s+"                   # "• ", "12. ", "(a) ": a list item, a sense
BRACES = re.compile(r"\{([^{}]*)\}")                       # {kluge} -> kluge
PREFIX = re.compile(r"^(?:" + MARKER +                     # what comes before a definition's words:
                    r"|(?:n|v|vt|vi|adj|adv|interj|excl|pl|obs|abbrev)\.,?\s+"   # part of speech "n. "
                    r"|\[[^\[\]]*\]\s*"                     # a label: "[Usenet] ", "[from the ...] "
                    r"|/[^/\s][^/]{0,40}/,?\s+"                 # a pronunciation: "/kluhj/ "
                    r"|[.,;:]\s*)")                          # what a label leaves: "[from ...]. Not ..."
NOTE = re.compile(r"^\[[^\[\]]*\]$")
INNER_NOTE = re.compile(r"\[([^\[\]]* [^\[\]]*)\]")              # brackets around words, not "[nt]roff"
SIGNATURE = re.compile(r"\s*--\s*[A-Z]{2,4}\s*(\]|$)")        # an editor's initials: "--ESR]"
PRONUNCIATION = re.compile(r"\s*/[A-Za-z@'´`·:\- ]*[@'´`·][A-Za-z@'´`·:\- ]*/")
ISBN = re.compile(r"[,;]?\s*ISBN[:\s]*[0-9Xx-]{9,}")
ANGLE_ADDRESS = re.compile(r"\s*\(?<[^<>\s]*[@:/][^<>\s]*>\)?")   # (<nather@astro.as.utexas.edu>)
URL = re.compile(r"\b(?:https?|ftp|news|gopher|telnet)://|\bwww\.|\w@\w")
SENTENCE = re.compile(r"(?<=[.!?])\s+")                    # minilm.data.split_sentences' rule
ENDS_SENTENCE = re.compile(r"[.!?:][\"')\]]*$")
ORDINARY = re.compile(r"[A-Za-z0-9À-ɏ\s.,;:!?'\"()\[\]\-/&%$+]")
CAPTION = re.compile(r"^\(The next cartoon in the Crunchly saga")   # the cartoons' navigation
FIRST = re.compile(r"^[A-Za-z0-9À-ɏ\"'($]")                 # not "> quoted mail", "#ifdef", "<flame>"
CITATION = re.compile(r"^\[[^\]]+\] .*(ISBN|Copyright ©)")
TYPOGRAPHY = {"‘": "'", "’": "'", "“": '"', "”": '"', "—": "--", "–": "-", "…": "..."}


def blocks(text: str):
    """The runs of non-blank lines of ``text``."""
    run = []
    for line in text.splitlines():
        if line.strip():
            run.append(line.rstrip())
        elif run:
            yield run
            run = []
    if run:
        yield run


def indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def kind(block: list[str]) -> str:
    """'heading', 'headword', 'paragraph' or 'display' (see the module docstring)."""
    first = block[0]
    if len(block) == 1 and (indent(first) <= 2 or indent(first) >= 10):
        return "heading"
    if HEADWORD.match(first.strip()) and indent(first) == 3:
        return "headword"                                  # one line, or two (":frobnitz:")
    col = indent(first)
    marker = re.match(MARKER, first.strip())
    hang = col + len(marker.group(0)) if marker else col   # a list item's lines may hang under its text
    rest = {indent(l) for l in block[1:]}
    return "paragraph" if rest <= {col} or rest == {hang} else "display"


def clean(paragraph: str) -> str:
    """One joined paragraph with its markup removed (empty when nothing is left)."""
    text = unicodedata.normalize("NFC", paragraph)
    for a, b in TYPOGRAPHY.items():
        text = text.replace(a, b)
    while BRACES.search(text):                             # "{{VAX}}" too
        text = BRACES.sub(r"\1", text)
    text = re.sub(r"(?<!')[{}](?!')", "", text)             # a stray brace (a typo), not the character '}'
    if NOTE.match(text):
        text = text[1:-1]                                  # a paragraph that is one [editor's note]
    while PREFIX.match(text):                              # "3. [in the Unix world] n. A diff (sense 2)."
        text = PREFIX.sub("", text, count=1)
    text = SIGNATURE.sub(r"\1", text)                     # "... in late 1990. --ESR]"
    text = INNER_NOTE.sub(r"\1", text)                     # "[Oddly enough, ...]" -> its words
    if text.count("[") != text.count("]"):                 # a note that spans paragraphs
        text = text.removeprefix("[").removesuffix("]")
    text = PRONUNCIATION.sub("", text)
    text = ISBN.sub("", text)
    text = ANGLE_ADDRESS.sub("", text)
    text = re.sub(r"\(\s*[,;]?\s*\)", "", text)            # "()" left by a removed pronunciation
    text = re.sub(r"\s+", " ", text).strip()
    text = re.sub(r" ([,.;:!?)])", r"\1", text)
    sentences = [s for s in SENTENCE.split(text) if not URL.search(s)]
    return " ".join(sentences).strip()


def is_prose(text: str) -> bool:
    words = len(text.split())
    if words < 3 or not re.search(r"[a-z]", text) or not FIRST.match(text):
        return False
    if not (ENDS_SENTENCE.search(text) or (words >= 12 and SENTENCE.search(text))):
        return False                                       # a label, a title, a list of words
    ordinary = len(ORDINARY.findall(text))
    return ordinary >= 0.97 * len(text)


def documents(text: str) -> list[list[str]]:
    """The Jargon File's text -> documents of prose paragraphs (see the module docstring)."""
    lines = text.replace("\u00a0", " ").splitlines()   # headings use no-break spaces
    try:
        start = next(i for i, l in enumerate(lines) if l.strip() == START and indent(l) == 0)
    except StopIteration:
        raise SystemExit(f"make_real_corpus: no line {START!r}: is this the Jargon File 4.4.7?") from None
    docs, current = [], []
    in_lexicon = in_entry = in_toc = False
    section = ""

    def close():
        nonlocal current
        if current:
            docs.append(current)
        current = []

    for block in blocks("\n".join(lines[start:])):
        k, head = kind(block), block[0].strip()
        if k in ("heading", "headword"):
            close()
            section = head if k == "heading" and indent(block[0]) != 2 else section
            if head.startswith("Part II."):
                in_lexicon = True
            elif head.startswith("Part III."):
                in_lexicon = False
            in_entry = k == "headword"
            in_toc = False
            continue
        if head == "Table of Contents":
            in_toc = True
            continue
        if in_toc and len(block) == 1:
            continue                                       # a contents entry
        in_toc = False
        if k != "paragraph" or (in_lexicon and not in_entry):
            continue                                       # displays; the lexicon's index lists
        joined = " ".join(l.strip() for l in block)
        if section == "Bibliography" and CITATION.match(joined):
            continue
        if CAPTION.match(joined):
            continue
        cleaned = clean(joined)
        if is_prose(cleaned):
            current.append(cleaned)
    close()
    return docs


def corpus_text(raw_gz: bytes) -> str:
    docs = documents(gzip.decompress(raw_gz).decode("utf-8"))
    return "\n\n".join("\n".join(d) for d in docs) + "\n"


def compress(text: str) -> bytes:
    """gzip with mtime 0 and no file name: the same text gives the same bytes."""
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", compresslevel=9, fileobj=buf, mtime=0) as f:
        f.write(text.encode("utf-8"))
    return buf.getvalue()


def stats(text: str) -> dict:
    lines = text.splitlines()
    return {"bytes": len(text.encode("utf-8")), "paragraphs": sum(1 for l in lines if l),
            "documents": text.count("\n\n") + 1, "words": len(text.split())}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("source", type=Path, help="jargon.txt.gz of the Debian package jargon-text 4.4.7")
    p.add_argument("--out", type=Path, default=OUT, help=f"where to write (default {OUT.relative_to(ROOT)})")
    args = p.parse_args(argv)
    raw = args.source.read_bytes()
    text = corpus_text(raw)
    data = compress(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(data)
    s = stats(text)
    print(f"{args.out}: {len(data):,} bytes gzip; {s['bytes']:,} bytes of text "
          f"(source {len(gzip.decompress(raw)):,}), {s['documents']:,} documents, "
          f"{s['paragraphs']:,} paragraphs, {s['words']:,} words")
    return 0


if __name__ == "__main__":
    sys.exit(main())
