"""The generator's input checks: small validators shared by every spec module.

Each raises SpecError with the file:line of the offending row or key.
"""

import re

from .specload import Row, Seq, SpecError, Where

IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


UPPER_IDENT = re.compile(r"^[A-Z0-9_]+$")


CAMEL = re.compile(r"^[A-Z][A-Za-z0-9]*$")


SET_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9]*(\.[A-Za-z][A-Za-z0-9]*)*$")


def where_of(obj, fallback):
    return getattr(obj, "where", None) or fallback


def expect_row(obj, where, what):
    if not isinstance(obj, Row):
        raise SpecError(where, f"{what} must be a mapping (a row in flow style: {{name: ...}})")
    return obj


def expect_list(obj, where, what):
    if not isinstance(obj, Seq):
        raise SpecError(where, f"{what} must be a list")
    return obj


def check_keys(row, required, optional=(), extra=None):
    """Unknown keys and missing fields. `extra` is a predicate for additional allowed keys."""
    for key in row:
        if key in required or key in optional:
            continue
        if extra is not None and extra(key):
            continue
        raise SpecError(row.key_where[key], f"unknown key '{key}'")
    for key in required:
        if key not in row:
            raise SpecError(row.where, f"missing field '{key}'")


def get_str(row, key, pattern=None, what=None, optional=False):
    if key not in row:
        if optional:
            return None
        raise SpecError(row.where, f"missing field '{key}'")
    value = row[key]
    if value is None and optional:
        return None
    if not isinstance(value, str) or value == "":
        raise SpecError(row.key_where[key], f"'{key}' must be a non-empty string")
    if pattern is not None and not pattern.match(value):
        raise SpecError(row.key_where[key], f"'{key}' is not a valid {what or 'name'}: {value!r}")
    return value


def get_int(row, key, lo, hi):
    value = row[key]
    if isinstance(value, bool) or not isinstance(value, int):
        raise SpecError(row.key_where[key], f"'{key}' must be an integer, not {value!r}")
    if value < lo or value > hi:
        raise SpecError(row.key_where[key], f"'{key}' value {value} is out of range [{lo}, {hi}]")
    return value


def get_bool(row, key, default=None):
    if key not in row:
        return default
    value = row[key]
    if not isinstance(value, bool):
        raise SpecError(row.key_where[key], f"'{key}' must be true or false")
    return value


def get_str_list(row, key, pattern=None, optional=False):
    if key not in row:
        if optional:
            return []
        raise SpecError(row.where, f"missing field '{key}'")
    value = row[key]
    if not isinstance(value, Seq):
        raise SpecError(row.key_where[key], f"'{key}' must be a list")
    out = []
    for item in value:
        if not isinstance(item, str) or (pattern is not None and not pattern.match(item)):
            raise SpecError(row.key_where[key], f"'{key}' has an invalid entry {item!r}")
        if item in out:
            raise SpecError(row.key_where[key], f"'{key}' lists {item!r} twice")
        out.append(item)
    return out


def rows_of(doc, key, path, required=True):
    if key not in doc:
        if not required:
            return []
        raise SpecError(Where(path, 1), f"missing top-level key '{key}'")
    items = expect_list(doc[key], doc.key_where[key], f"'{key}'")
    for item in items:
        expect_row(item, where_of(item, items.where), f"an entry of '{key}'")
    return items


def check_top(doc, path, allowed):
    for key in doc:
        if key not in allowed:
            raise SpecError(doc.key_where[key], f"unknown top-level key '{key}'")


def unique(rows, key="name", scope=None):
    seen = {}
    for row in rows:
        name = row[key]
        if name in seen:
            raise SpecError(row.key_where[key],
                            f"duplicate name '{name}'{scope or ''} (first at line {seen[name].line})")
        seen[name] = row.where


def upper_snake(name):
    """FileNotFound -> FILE_NOT_FOUND, InvalidUtf8 -> INVALID_UTF8, WSAInit -> WSA_INIT."""
    s = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name)
    s = re.sub(r"(?<=[A-Z])(?=[A-Z][a-z])", "_", s)
    return s.upper()


def set_c_name(name):
    """File.OpenError -> file_open, File.Reader.Error -> file_reader, Queue.Error -> queue."""
    parts = name.split(".")
    last = parts[-1]
    if last == "Error" and len(parts) > 1:
        parts = parts[:-1]
    elif last.endswith("Error") and last != "Error":
        parts[-1] = last[: -len("Error")]
    return "_".join(upper_snake(p).lower() for p in parts)


def c_ident_upper(name):
    return re.sub(r"[^A-Za-z0-9]", "_", name).upper()
