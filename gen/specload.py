"""Reading spec/*.yaml with line numbers.

Every mapping and list the loader builds remembers the file and line it started on, so that the
validator can say `spec/errno.yaml:12: message` about any row. Duplicate keys inside one mapping are
an error here already (PyYAML silently keeps the last one).
"""

import yaml


class SpecError(Exception):
    """A problem with the spec, located at file:line."""

    def __init__(self, where, message):
        super().__init__(f"{where}: {message}")
        self.where = where
        self.message = message


class Where:
    """A location in a spec file."""

    __slots__ = ("path", "line")

    def __init__(self, path, line):
        self.path = path
        self.line = line

    def __str__(self):
        return f"{self.path}:{self.line}"


class Row(dict):
    """A YAML mapping that knows where it came from (and where each of its keys is)."""

    where = None
    key_where = None


class Seq(list):
    """A YAML sequence that knows where it came from."""

    where = None


def _make_loader(path):
    class Loader(yaml.SafeLoader):
        pass

    def construct_mapping(loader, node):
        row = Row()
        row.where = Where(path, node.start_mark.line + 1)
        row.key_where = {}
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node, deep=True)
            kw = Where(path, key_node.start_mark.line + 1)
            if not isinstance(key, (str, int)):
                raise SpecError(kw, f"mapping key must be a string, not {type(key).__name__}")
            if key in row:
                raise SpecError(kw, f"duplicate key '{key}'")
            row[key] = loader.construct_object(value_node, deep=True)
            row.key_where[key] = kw
        return row

    def construct_sequence(loader, node):
        seq = Seq(loader.construct_object(child, deep=True) for child in node.value)
        seq.where = Where(path, node.start_mark.line + 1)
        return seq

    Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, construct_mapping)
    Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, construct_sequence)
    return Loader


def load(path, display):
    """Load one spec file. `display` is the path used in messages (relative to the repo)."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise SpecError(Where(display, 0), f"cannot read: {e.strerror}") from None
    try:
        data = yaml.load(text, Loader=_make_loader(display))  # noqa: S506 - SafeLoader subclass
    except SpecError:
        raise
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line = mark.line + 1 if mark else 0
        raise SpecError(Where(display, line), f"YAML syntax: {e.problem or e.context}") from None
    except yaml.YAMLError as e:
        raise SpecError(Where(display, 0), f"YAML: {e}") from None
    if not isinstance(data, Row):
        raise SpecError(Where(display, 1), "the file must be a mapping of top-level keys")
    return data
