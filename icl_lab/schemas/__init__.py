"""The declared structure of the files icl_lab reads: JSON Schemas (draft 2020-12) shipped beside this
module and checked with :mod:`jsonschema`.

* ``record.schema.json``: a record of the results store (:mod:`icl_lab.records`);
* ``claims.schema.json``: a paper's ``claims.toml`` (:mod:`icl_lab.claims`, :mod:`icl_lab.criteria`);
* ``coverage.schema.json``: a paper's ``coverage.toml`` (:mod:`icl_lab.coverage`).

A schema says what a file must look like: its fields, their types, the allowed words, what is required
and that no other field is there. What a schema cannot say (a checksum, whether the code is current, a
diverged run's non-finite loss, a name resolved in a paper's module, where a threshold comes from) is
checked by the module that reads the file.

:func:`problem` gives the one error that matters most (``jsonschema.exceptions.best_match``) as a field
path (``meta.wall_seconds``, ``test[0].range``: list items counted from 0) and the rule it breaks in words
(``must be a number >= 0 (got -1.0)``)."""
from __future__ import annotations

import functools
import json
from importlib import resources
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import jsonschema

SCHEMAS = ("record", "claims", "coverage")
_TYPE_WORDS = {"object": "an object", "array": "a list", "string": "a string", "number": "a number",
               "integer": "an integer", "boolean": "true or false", "null": "null"}
#: what an object is called in a schema's files (TOML says table)
_OBJECT = {"record": "an object", "claims": "a table", "coverage": "a table"}
#: the rules whose error is the field's own description (``must be <description>``), where it has one
_DESCRIBED = ("type", "pattern", "minItems", "maxItems", "minProperties", "maxProperties")


def _integer(checker, instance) -> bool:  # 1.0 is no seed, count or process id; JSON Schema would take it
    return isinstance(instance, int) and not isinstance(instance, bool)


@functools.cache
def _validator_class():
    """Draft 2020-12 with an integer that is an int. jsonschema is imported here, when a file is first
    checked: importing it may take a second or more (with its optional format checkers installed), which
    a process that never reads a record or a claims table should not pay."""
    import jsonschema

    draft = jsonschema.Draft202012Validator
    return jsonschema.validators.extend(draft, type_checker=draft.TYPE_CHECKER.redefine("integer", _integer))


def schema(name: str) -> dict:
    """The schema ``name`` (one of ``SCHEMAS``) as a dict."""
    if name not in SCHEMAS:
        raise ValueError(f"schema must be one of {SCHEMAS} (got {name!r})")
    return json.loads(resources.files(__name__).joinpath(f"{name}.schema.json").read_text(encoding="utf-8"))


@functools.cache
def validator(name: str, part: str | None = None) -> jsonschema.protocols.Validator:
    """The compiled validator of the schema ``name`` (built and checked once per process); with ``part``,
    of one of its definitions (``part="test"``: one ``[[claim.test]]`` table)."""
    s, cls = schema(name), _validator_class()
    if part is not None:
        if part not in s.get("$defs", {}):
            raise ValueError(f"part must be one of {sorted(s.get('$defs', {}))} (got {part!r})")
        s = {"$schema": s.get("$schema"), "$defs": s["$defs"], "$ref": f"#/$defs/{part}"}
    cls.check_schema(s)
    return cls(s)


def field(path) -> str:
    """A path of keys and list indices as text: ``meta.code.fingerprint``, ``test[0].range[1]``."""
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else f".{p}" if out else str(p)
    return out


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _kinds(types, obj: str) -> str:
    words = [obj if t == "object" else _TYPE_WORDS.get(t, t) for t in ([types] if isinstance(types, str) else types)]
    return " or ".join(words)


def _got(value, obj: str = "an object") -> str:
    return (f"got {obj}" if isinstance(value, dict) else f"got a list of {len(value)}" if isinstance(value, list)
            else f"got {_short(value)}")


def _rule(e: jsonschema.ValidationError, obj: str) -> tuple[list, str]:
    """The path of the field an error is about, and the rule it breaks in words."""
    path, s, v, kw, value = list(e.absolute_path), e.schema, e.instance, e.validator, e.validator_value
    described = isinstance(s, dict) and s.get("description") and kw in _DESCRIBED
    if kw == "required":  # a required field is named by its own path; a condition's says what requires it
        missing = next((k for k in value if isinstance(v, dict) and k not in v), value[0])
        why = s.get("description") if "then" in e.schema_path else None
        return path + [missing], "is required" + (f" {why}" if why else "")
    if kw == "additionalProperties" and value is False:
        known = sorted(s.get("properties", {}))
        unknown = sorted(set(v) - set(known), key=str)
        words = ", ".join(map(repr, unknown))
        return path, f"unknown field{'s' if len(unknown) > 1 else ''} {words} (known: {', '.join(known)})"
    if described:
        return path, f"must be {s['description']} ({_got(v, obj)})"
    if kw == "type":
        return path, f"must be {_kinds(value, obj)} ({_got(v, obj)})"
    if kw == "const":
        return path, f"must be {value!r} ({_got(v, obj)})"
    if kw == "enum":
        return path, f"must be one of {', '.join(map(repr, value))} ({_got(v, obj)})"
    if kw in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"):
        op = {"minimum": ">=", "exclusiveMinimum": ">", "maximum": "<=", "exclusiveMaximum": "<"}[kw]
        return path, f"must be a number {op} {value} ({_got(v, obj)})"
    if kw == "minLength":
        return path, "must be non-empty" if value == 1 else f"must have at least {value} characters ({_got(v, obj)})"
    if kw in ("minItems", "maxItems"):
        most = "at least" if kw == "minItems" else "at most"
        return path, f"must list {most} {value} item{'s' if value != 1 else ''} ({_got(v, obj)})"
    if kw == "pattern":
        return path, f"must match {value} ({_got(v, obj)})"
    return path, " ".join(e.message.split())  # a keyword no schema here uses yet: jsonschema's own words


def problem(name: str, instance, part: str | None = None) -> tuple[list, str] | None:
    """The most relevant way ``instance`` breaks the schema ``name`` (or its definition ``part``), as
    ``(path, rule)``: the path of the field (a list of keys and indices; :func:`field` writes it) and the rule
    in words; None when valid."""
    from jsonschema.exceptions import best_match, by_relevance

    # of two errors at one place, an unknown field comes first: a misspelt field is also a missing one
    relevance = by_relevance(strong=frozenset({"additionalProperties"}))
    error = best_match(validator(name, part).iter_errors(instance), key=relevance)
    return None if error is None else _rule(error, _OBJECT[name])
