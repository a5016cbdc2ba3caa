"""Python types to JSON schemas: pydantic models, dataclasses, TypedDict, Literal, Enum,
builtins and their generic forms (``list[int]``, ``dict[str, X]``, ``Optional``, ``Union``).

Dataclasses and TypedDicts become ``$defs`` entries referenced by ``$ref``, so recursive
types work. pydantic models give their own ``model_json_schema()``.
"""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

from fsm.errors import InvalidSpec

_SCALARS: dict[object, dict] = {
    bool: {"type": "boolean"},
    int: {"type": "integer"},
    float: {"type": "number"},
    str: {"type": "string"},
    type(None): {"type": "null"},
    None: {"type": "null"},
    Any: {},
    object: {},
}


def is_python_type(value: object) -> bool:
    """Whether ``value`` is a type (or typing form) rather than a schema document."""
    return not isinstance(value, (dict, bool, str, list)) and value is not None


def type_schema(tp: object) -> dict:
    """The JSON schema of values of ``tp``."""
    if _is_pydantic_model(tp):
        return tp.model_json_schema()  # type: ignore[union-attr]
    defs: dict[str, dict] = {}
    schema = _schema(tp, defs)
    if defs:
        schema = {**schema, "$defs": defs}
    return schema


def _is_pydantic_model(tp: object) -> bool:
    return isinstance(tp, type) and callable(getattr(tp, "model_json_schema", None))


def _schema(tp: object, defs: dict[str, dict]) -> dict:
    try:
        hash(tp)
    except TypeError:  # a value such as {1, 2}, not a type
        raise InvalidSpec(
            f"a schema is a dict, a JSON string, a bool or a Python type; got {tp!r}"
        ) from None
    if tp in _SCALARS:
        return dict(_SCALARS[tp])  # type: ignore[index]
    origin = get_origin(tp)
    if origin is not None:
        return _generic_schema(tp, origin, get_args(tp), defs)
    if tp in (list, set, frozenset, tuple, dict):
        return _generic_schema(tp, tp, (), defs)
    return _class_schema(tp, defs)


def _generic_schema(tp: object, origin: object, args: tuple, defs: dict[str, dict]) -> dict:
    """The schema of a parametrised type (``list[int]``, ``Literal[...]``, unions, ...)
    or of a bare container class (then ``origin is tp`` and ``args == ()``)."""
    if origin is Literal:
        return {"enum": list(args)}
    if origin is Union or origin is types.UnionType:
        return {"anyOf": [_schema(a, defs) for a in args]}
    if origin is typing.Annotated:
        return _constrained(_schema(args[0], defs), args[1:])
    if origin in (list, set, frozenset):
        item = _schema(args[0], defs) if args else {}
        schema = {"type": "array", "items": item}
        return {**schema, "uniqueItems": True} if origin in (set, frozenset) else schema
    if origin is tuple:
        if not args or (len(args) == 2 and args[1] is Ellipsis):
            return {"type": "array", "items": _schema(args[0], defs) if args else {}}
        return {
            "type": "array",
            "prefixItems": [_schema(a, defs) for a in args],
            "items": False,
            "minItems": len(args),
        }
    if origin is dict:
        if args and args[0] is not str:
            raise InvalidSpec(f"JSON object keys are strings; {tp!r} has {args[0]!r} keys")
        return {"type": "object", "additionalProperties": _schema(args[1], defs) if args else {}}
    raise InvalidSpec(f"cannot turn {tp!r} into a JSON schema")


def _class_schema(tp: object, defs: dict[str, dict]) -> dict:
    """The schema of an enum, a pydantic model, a dataclass or a TypedDict."""
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return {"enum": [member.value for member in tp]}
    if _is_pydantic_model(tp):
        return _defined(tp, defs, lambda: _pydantic_def(tp, defs))
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return _defined(tp, defs, lambda: _dataclass_def(tp, defs))
    if typing.is_typeddict(tp):
        return _defined(tp, defs, lambda: _typeddict_def(tp, defs))
    raise InvalidSpec(f"cannot turn {tp!r} into a JSON schema")


_NUMERIC_KEYWORDS = {
    "ge": "minimum",
    "gt": "exclusiveMinimum",
    "le": "maximum",
    "lt": "exclusiveMaximum",
    "multiple_of": "multipleOf",
}


def _constrained(schema: dict, metadata: tuple) -> dict:
    """``schema`` with the constraints of ``Annotated`` metadata: pydantic ``Field(...)``
    and annotated-types markers (``Ge``, ``Le``, ``MaxLen``, ...), read by attribute
    name so neither library has to be imported here."""
    out = dict(schema)
    for marker in metadata:
        for item in [marker, *getattr(marker, "metadata", ())]:
            for attribute, keyword in _NUMERIC_KEYWORDS.items():
                value = getattr(item, attribute, None)
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    out[keyword] = value
            for attribute, suffix in (("min_length", "min"), ("max_length", "max")):
                value = getattr(item, attribute, None)
                if isinstance(value, int) and not isinstance(value, bool):
                    noun = "Items" if out.get("type") == "array" else "Length"
                    out[suffix + noun] = value
            pattern = getattr(item, "pattern", None)
            if isinstance(pattern, str):
                out["pattern"] = pattern
    return out


def _defined(tp: type, defs: dict[str, dict], build: typing.Callable[[], dict]) -> dict:
    """A ``$ref`` to ``tp``'s entry in ``defs``, built once (recursion-safe)."""
    name = tp.__qualname__
    if name not in defs:
        defs[name] = {}
        defs[name] = build()
    return {"$ref": f"#/$defs/{name}"}


def _dataclass_def(tp: type, defs: dict[str, dict]) -> dict:
    hints = get_type_hints(tp)
    properties, required = {}, []
    for f in dataclasses.fields(tp):
        properties[f.name] = _schema(hints[f.name], defs)
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            required.append(f.name)
    return _object(tp.__name__, properties, required)


def _typeddict_def(tp: type, defs: dict[str, dict]) -> dict:
    hints = get_type_hints(tp)
    properties = {name: _schema(hint, defs) for name, hint in hints.items()}
    required = [name for name in hints if name in tp.__required_keys__]  # type: ignore[attr-defined]
    return _object(tp.__name__, properties, required)


def _pydantic_def(tp: type, defs: dict[str, dict]) -> dict:
    schema = tp.model_json_schema(ref_template="#/$defs/{model}")  # type: ignore[attr-defined]
    defs.update(schema.pop("$defs", {}))
    return schema


def _object(title: str, properties: dict, required: list[str]) -> dict:
    return {
        "title": title,
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }
