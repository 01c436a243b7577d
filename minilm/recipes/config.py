"""Command-line options generated from a config dataclass: one field, one option.

    @dataclass
    class GPTRecipeConfig(CorpusConfig):
        block_size: int = 48            # context length in tokens

    add_options(parser, GPTRecipeConfig)           # --block-size BLOCK_SIZE  context length in tokens (default 48)
    cfg = from_args(GPTRecipeConfig, parser.parse_args(argv))

The option of field ``name`` is ``--name`` with the underscores as dashes. Its type comes from the
annotation: int, float, str, Path (any class that takes one string); ``Optional[X]`` is X with None
as the default; ``Literal[...]`` gives the choices; ``bool`` is a flag (``--name`` when the default
is False, ``--name/--no-name`` when it is True). Its default is the field's. Its help is the comment
after the field (``# ...``), continued on the comment-only lines below that start in the same
column, then "(default X)" unless the default is None or False (the comment says what None means)
or the comment already names its default. A subclass that redeclares a field only to change its
default keeps the help of the class that commented it.

An experiment (``minilm experiment NAME``) offers a few of its fields (``only=``) and has a second
set of defaults for --quick (``quick=``, an instance): its options then default to "not given", the
help names both defaults, and ``from_args(cls, namespace, base=quick or full)`` applies what was given.

Only the command layer (``minilm/commands/``) holds a parsed Namespace; it turns it into the config
with :func:`from_args` at once, and everything below takes the dataclass.
"""
from __future__ import annotations

import argparse
import ast
import dataclasses
import functools
import inspect
import io
import textwrap
import tokenize
import types
import typing

from autograd.errors import ConfigError


def option_name(field_name: str) -> str:
    return "--" + field_name.replace("_", "-")


def add_options(parser, cls, skip=(), *, only=None, quick=None) -> None:
    """One option per field of the dataclass ``cls`` (``skip``: the names the caller's parser already
    has, such as ``--seed``; ``only``: these fields alone, in this order). With ``quick``, an instance
    of ``cls`` holding the --quick defaults, an option left out is absent from the parsed Namespace."""
    hints = typing.get_type_hints(cls)
    comments = field_comments(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    unknown = [name for name in only or () if name not in fields]
    if unknown:
        raise ConfigError(f"add_options: {cls.__name__} has no field {unknown}; its fields are {list(fields)}")
    for f in (fields[name] for name in only) if only is not None else fields.values():
        if f.name not in skip:
            quick_default = _default(f) if quick is None else getattr(quick, f.name)
            _add_option(parser, f.name, hints[f.name], _default(f), comments.get(f.name, ""), cls,
                        quick=quick_default, suppress=quick is not None)


def from_args(cls, namespace, base=None):
    """The config ``cls`` with every field that ``namespace`` (a parsed command line) holds; the
    others from ``base`` (an instance of ``cls``: the --quick sizes, say) or ``cls``'s defaults."""
    values = vars(namespace)
    given = {f.name: values[f.name] for f in dataclasses.fields(cls) if f.init and f.name in values}
    return cls(**given) if base is None else dataclasses.replace(base, **given)


def field_comments(cls) -> dict[str, str]:
    """``{field: comment}`` of a dataclass; the nearest class of the MRO that comments a field wins."""
    out: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if dataclasses.is_dataclass(klass):
            out.update(_own_comments(klass))
    return out


@functools.lru_cache(maxsize=None)
def _own_comments(klass) -> dict[str, str]:
    """The trailing comments of the fields that ``klass``'s own source declares."""
    try:
        source = textwrap.dedent(inspect.getsource(klass))
    except (OSError, TypeError):  # no source (defined in a REPL or by exec): no help text
        return {}
    comments = {}  # line -> (column, text, whether the line holds nothing but the comment)
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            row, col = tok.start
            comments[row] = (col, tok.string[1:].strip(), not tok.line[:col].strip())
    out = {}
    for node in ast.parse(source).body[0].body:
        if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
            continue
        trailing = [comments[r] for r in range(node.lineno, node.end_lineno + 1)
                    if r in comments and not comments[r][2]]
        if not trailing:
            continue
        col, text, _ = trailing[0]
        parts, row = [text], node.end_lineno + 1
        while row in comments and comments[row][2] and comments[row][0] == col:  # continuation lines
            parts.append(comments[row][1])
            row += 1
        out[node.target.id] = " ".join(parts)
    return out


def _default(f):
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    raise ConfigError(f"add_options: field {f.name!r} has no default; an option needs one")


def _show(value) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _add_option(parser, name, hint, default, comment, cls, *, quick=None, suppress=False) -> None:
    kind = hint
    if typing.get_origin(hint) in (typing.Union, types.UnionType):  # Optional[X] = Union[X, None]
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        if len(args) != 1:
            raise ConfigError(f"add_options: {cls.__name__}.{name}: {hint} is a union of several types; "
                              "expected one type, or Optional of one")
        kind = args[0]
    text = comment
    if default is not None and default is not False and "(default" not in comment:
        also = f"; --quick {_show(quick)}" if suppress and quick != default else ""
        text = f"{comment} (default {_show(default)}{also})".strip()
    kw = {"dest": name, "default": argparse.SUPPRESS if suppress else default,
          "help": text.replace("%", "%%")}  # argparse %-formats help
    if kind is bool:
        kw["action"] = argparse.BooleanOptionalAction if default else "store_true"
    elif typing.get_origin(kind) is typing.Literal:
        kw["choices"] = typing.get_args(kind)
        kw["type"] = type(kw["choices"][0])
    elif isinstance(kind, type) and typing.get_origin(kind) is None:
        kw["type"] = kind
    else:
        raise ConfigError(f"add_options: {cls.__name__}.{name}: cannot make an option of {hint}; expected int, "
                          "float, str, bool, a class such as Path, Optional[...] or Literal[...]")
    parser.add_argument(option_name(name), **kw)
