"""YAML into frozen dataclasses, checked field by field: a missing or unknown key, a
wrong type, a value outside its choices, a {placeholder} nothing fills, each reported
with the file and the dotted field. The facts (boardlab.facts.board) are built with it."""
from __future__ import annotations

import dataclasses
import string
import types
import typing
from dataclasses import field
from pathlib import Path

import yaml

from boardlab.errors import InputError, one_line
from boardlab import yamltext


class FactsError(InputError):
    """A facts file is missing, unreadable or has a bad field."""


# A field without a default is required; `choices` in a field's metadata lists the values
# it may take, `placeholders` the {names} its text may use.

def one_of(values, default=dataclasses.MISSING):
    return field(default=default, metadata={"choices": values})


def template(names, default=dataclasses.MISSING):
    return field(default=default, metadata={"placeholders": names})


def _typename(t) -> str:
    if t is type(None):
        return "null"
    if dataclasses.is_dataclass(t):
        return "a mapping"
    origin = typing.get_origin(t)
    if origin in (tuple, list):
        return f"a list of {_typename(typing.get_args(t)[0])}"
    if origin is dict:
        return "a mapping"
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_typename(a) for a in typing.get_args(t))
    return t.__name__


def _convert(t, value, source, where):
    """value as type t, or FactsError naming source and the dotted field where."""
    def wrong():
        return FactsError(f"{source}: field '{where}' must be {_typename(t)}, got {value!r}")
    origin = typing.get_origin(t)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(t)
        if value is None and type(None) in args:
            return None
        kinds = [a for a in args if a is not type(None)]
        if len(kinds) == 1:   # Optional[X]: X's own error, which names the inner field
            return _convert(kinds[0], value, source, where)
        for a in kinds:
            try:
                return _convert(a, value, source, where)
            except FactsError:
                continue
        raise wrong()
    if dataclasses.is_dataclass(t):
        return build(t, value, source, where + ".")
    if origin is tuple:
        if not isinstance(value, list):
            raise wrong()
        return tuple(_convert(typing.get_args(t)[0], v, source, f"{where}[{i}]")
                     for i, v in enumerate(value))
    if origin is dict:
        if not isinstance(value, dict):
            raise wrong()
        item = typing.get_args(t)[1]
        out = {}
        for k, v in value.items():
            if dataclasses.is_dataclass(item) and isinstance(v, dict):
                v = {"name": str(k), **v}
            out[str(k)] = _convert(item, v, source, f"{where}.{k}")
        return out
    if t is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if not isinstance(value, t) or (isinstance(value, bool) and t is not bool):
        raise wrong()
    return value


def _check_text(f, value, source, where):
    """A field's choices and {placeholders}."""
    choices = f.metadata.get("choices")
    if choices and value not in choices:
        raise FactsError(f"{source}: field '{where}' must be one of {', '.join(choices)}, "
                         f"got {value!r}")
    names = f.metadata.get("placeholders")
    if names and value is not None:
        for key, text in (value.items() if isinstance(value, dict) else [(None, value)]):
            used = {n for _, n, _, _ in string.Formatter().parse(text) if n is not None}
            unknown = sorted(used - set(names))
            if unknown:
                at = f"{where}.{key}" if key else where
                raise FactsError(f"{source}: field '{at}' uses {{{', '.join(unknown)}}}, which "
                                 f"nothing fills (it may use: {', '.join(names)})")


def build(cls, data, source, prefix=""):
    if not isinstance(data, dict):
        what = f"field '{prefix.rstrip('.')}'" if prefix else "the top level"
        raise FactsError(f"{source}: {what} must be a mapping, got {data!r}")
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.name != "path"}
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise FactsError(f"{source}: unknown field(s) {', '.join(prefix + str(u) for u in unknown)} "
                         f"(known: {', '.join(prefix + n for n in fields)})")
    values = {}
    for name, f in fields.items():
        where = prefix + name
        if name not in data:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise FactsError(f"{source}: missing field '{where}'")
            continue
        values[name] = _convert(hints[name], data[name], source, where)
        _check_text(f, values[name], source, where)
    return cls(**values)


def load_yaml(path: Path):
    try:
        with open(path, encoding="utf-8") as f:
            return yamltext.load(f)
    except FileNotFoundError:
        raise FactsError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise FactsError(f"{path}: a directory, not a facts file") from None
    except UnicodeDecodeError as e:
        raise FactsError(f"{path}: not UTF-8 text (byte {e.start}: {e.reason})") from None
    except OSError as e:
        raise FactsError(f"{path}: cannot be read: {e.strerror or e}") from None
    except yaml.YAMLError as e:
        raise FactsError(f"{path}: not valid YAML: {one_line(e)}") from None
