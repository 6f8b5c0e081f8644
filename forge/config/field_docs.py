"""Field docstrings as descriptions, read from each module's source once (docs/adr/0042).

pydantic's `use_attribute_docstrings` gives the same descriptions, but finds each class's
source by walking the stack through `inspect.getmodule`, which maps every module loaded so far
to its file the first time, then tokenizes and parses each class on its own: about 40 ms for
the settings once Textual is loaded, on the start-up path of every session. Here each module
is parsed once, when its first documented model is made.
"""

from __future__ import annotations

import ast
import inspect
import sys
from typing import Any

from pydantic import BaseModel, ConfigDict

_parsed: dict[str, ast.Module | None] = {}
"""Each module's syntax tree, by module name (None: its source cannot be read)."""


def attribute_docstrings(cls: type) -> dict[str, str]:
    """`cls`'s attribute docstrings by field name: the string statement right after an
    annotated name (`model: str = "x"`, then the docstring line), cleaned as `inspect.cleandoc`
    does — what pydantic's `use_attribute_docstrings` reads."""
    node = _class_node(cls)
    if node is None:
        return {}
    docs: dict[str, str] = {}
    for previous, statement in zip(node.body, node.body[1:], strict=False):
        if (
            isinstance(previous, ast.AnnAssign)
            and isinstance(previous.target, ast.Name)
            and isinstance(statement, ast.Expr)
            and isinstance(statement.value, ast.Constant)
            and isinstance(statement.value.value, str)
        ):
            docs[previous.target.id] = inspect.cleandoc(statement.value.value)
    return docs


def _class_node(cls: type) -> ast.ClassDef | None:
    """The class statement of `cls` in its module's source, found by its qualified name; a
    class made inside a function is parsed from its own source instead."""
    if "<locals>" in cls.__qualname__:
        try:
            tree = ast.parse(inspect.cleandoc("\n" + inspect.getsource(cls)))
        except (OSError, TypeError, SyntaxError):
            return None
        first = tree.body[0] if tree.body else None
        return first if isinstance(first, ast.ClassDef) else None
    scope: ast.Module | ast.ClassDef | None = _module_tree(cls.__module__)
    for name in cls.__qualname__.split("."):
        if scope is None:
            return None
        scope = next(
            (item for item in scope.body if isinstance(item, ast.ClassDef) and item.name == name),
            None,
        )
    return scope if isinstance(scope, ast.ClassDef) else None


def _module_tree(name: str) -> ast.Module | None:
    if name not in _parsed:
        module = sys.modules.get(name)
        try:
            source = inspect.getsource(module) if module is not None else None
            _parsed[name] = ast.parse(source) if source is not None else None
        except (OSError, TypeError, SyntaxError):
            _parsed[name] = None
    return _parsed[name]


class DocumentedModel(BaseModel):
    """A model whose fields' docstrings are their descriptions (`model_fields[name]
    .description`, shown in the settings screen), as with `use_attribute_docstrings=True`.

    Its schema is built on first use (`defer_build`), after the descriptions are set, so they
    are in the JSON schema as well.
    """

    model_config = ConfigDict(defer_build=True)

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        docs = attribute_docstrings(cls)
        for name, field in cls.model_fields.items():
            if field.description is None and name in docs:
                field.description = docs[name]
