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

A field may hold another config (:func:`nested`): a recipe's config holds the model's config
(``model``) and the schedule (``train``, a ``minilm.train.TrainConfig``), and an experiment's config
holds the recipe's (``recipe``), so that a value such as the learning rate is declared once, in the
class that uses it. Their fields are options too, with the
same flat names (``--lr``, ``--n-layer``; two fields of one name anywhere in the tree are an error),
but for those the recipe sets itself (``nested(..., set_by_recipe=("vocab_size",))``).
:func:`override` changes fields by those names, wherever they are nested::

    cfg = override(ElectraRecipeConfig(), n_layer=1, lr=1e-3)   # cfg.model.n_layer, cfg.train.lr

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


def nested(default, *, set_by_recipe=()):
    """A config field that holds another config, ``default`` (a dataclass instance): its fields are
    options of the outer config, but for ``set_by_recipe``, the fields the recipe fills in (from the data:
    the vocabulary size, the special ids), which no option may set, at any depth below this field (an
    experiment that holds a recipe's config hides the schedule's ``seed``: each run sets its own)."""
    return dataclasses.field(default_factory=lambda: dataclasses.replace(default),
                             metadata={"set_by_recipe": tuple(set_by_recipe)})


def leaves(cls, instance=None) -> dict:
    """``{name: (path, field, type, value, owner)}`` of every option field of the config ``cls``,
    nested configs walked into (``path``: the attribute names from the top, ``("model", "n_layer")``;
    ``owner``: the dataclass that declares it); ``value`` is ``instance``'s (default: ``cls()``'s).
    Two leaves of one name are an error."""
    if instance is None:
        try:
            instance = cls()
        except TypeError as err:
            raise ConfigError(f"{cls.__name__}: every field needs a default to become an option ({err})") from err
    out: dict = {}

    def walk(klass, obj, path, hidden):
        hints = typing.get_type_hints(klass)
        own = [f for f in dataclasses.fields(klass) if f.init and f.name not in hidden]
        nested_last = lambda f: ("set_by_recipe" in f.metadata, f.name == "train")  # own, the model's, the schedule
        for f in sorted(own, key=nested_last):
            value = getattr(obj, f.name)
            if "set_by_recipe" in f.metadata:  # what is hidden here is hidden in everything below
                walk(hints[f.name], value, path + (f.name,), hidden | set(f.metadata["set_by_recipe"]))
                continue
            if f.name in out:
                raise ConfigError(f"{cls.__name__}: two fields are called {f.name!r} ("
                                  f"{'.'.join(out[f.name][0])} and {'.'.join(path + (f.name,))}); "
                                  "an option name must say which one it sets")
            out[f.name] = (path + (f.name,), f, hints[f.name], value, klass)
    walk(cls, instance, (), set())
    return out


def add_options(parser, cls, skip=(), *, only=None, quick=None) -> None:
    """One option per field of the dataclass ``cls`` and of the configs it nests (``skip``: the names
    the caller's parser already has, such as ``--seed``; ``only``: these fields alone, in this order).
    With ``quick``, an instance of ``cls`` holding the --quick defaults, an option left out is absent
    from the parsed Namespace."""
    fields = leaves(cls)
    quick_values = None if quick is None else leaves(cls, quick)
    unknown = [name for name in only or () if name not in fields]
    if unknown:
        raise ConfigError(f"add_options: {cls.__name__} has no field {unknown}; its fields are {list(fields)}")
    groups: dict = {}   # a nested config's options under its own heading in --help: "model (GPTConfig)"
    for name in only if only is not None else fields:
        if name in skip:
            continue
        path, f, hint, default, klass = fields[name]
        where = parser
        if len(path) > 1:
            title = f"{'.'.join(path[:-1])} ({klass.__name__})"
            where = groups.setdefault(title, parser.add_argument_group(title))
        quick_default = default if quick is None else quick_values[name][3]
        _add_option(where, name, hint, default, field_comments(klass).get(name, ""), klass,
                    quick=quick_default, suppress=quick is not None)


def from_args(cls, namespace, base=None):
    """The config ``cls`` with every field that ``namespace`` (a parsed command line) holds; the
    others from ``base`` (an instance of ``cls``: the --quick sizes, say) or ``cls``'s defaults."""
    values = vars(namespace)
    base = cls() if base is None else base
    return override(base, **{name: values[name] for name in leaves(cls, base) if name in values})


def override(cfg, **changes):
    """``cfg`` with the fields named in ``changes`` replaced, wherever they are nested (their option
    names without the dashes: ``override(cfg, n_layer=2, lr=1e-3)`` sets ``cfg.model.n_layer`` and
    ``cfg.train.lr``). An unknown name is an error that lists the known ones."""
    fields = leaves(type(cfg), cfg)
    unknown = sorted(set(changes) - set(fields))
    if unknown:
        raise ConfigError(f"{type(cfg).__name__} has no option {unknown}; its options are {sorted(fields)}")
    by_path: dict = {}
    for name, value in changes.items():
        path = fields[name][0]
        by_path.setdefault(path[:-1], {})[path[-1]] = value
    return _replace_at(cfg, (), by_path)


def _replace_at(obj, path, by_path):
    """``obj`` (the config at ``path``) with ``by_path``'s changes below it applied, inner first."""
    inner = {f.name: _replace_at(getattr(obj, f.name), path + (f.name,), by_path)
             for f in dataclasses.fields(obj) if "set_by_recipe" in f.metadata
             and any(p[:len(path) + 1] == path + (f.name,) for p in by_path)}
    changes = {**inner, **by_path.get(path, {})}
    return dataclasses.replace(obj, **changes) if changes else obj


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
