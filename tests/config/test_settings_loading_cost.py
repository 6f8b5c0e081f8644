"""What loading the settings costs before the first task (docs/adr/0042): pydantic-settings
is imported only to decode a `FORGE_*` variable, and field docstrings become the same
descriptions pydantic's `use_attribute_docstrings` gives, without its stack walk."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import BaseModel
from pydantic._internal._docs_extraction import extract_docstrings_from_cls

import forge.config.hook_settings
import forge.config.prices
import forge.config.settings
from forge.config.field_docs import DocumentedModel, attribute_docstrings

LOAD = (
    "import json, sys; from forge.config.store import ConfigStore; "
    "settings = ConfigStore().current.settings; "
    "print(json.dumps([settings.llm.model, 'pydantic_settings' in sys.modules]))"
)


def load_in_subprocess(config_home: Path, **variables: str) -> list[object]:
    config = config_home / "forge" / "config.yaml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("llm:\n  model: from-file\n", encoding="utf-8")
    environment = {**os.environ, "XDG_CONFIG_HOME": str(config_home), **variables}
    result = subprocess.run(
        [sys.executable, "-c", LOAD], capture_output=True, text=True, timeout=120, env=environment
    )
    assert result.returncode == 0, result.stderr
    loaded: list[object] = json.loads(result.stdout.strip().splitlines()[-1])
    return loaded


def test_loading_without_forge_variables_does_not_import_pydantic_settings(
    tmp_path: Path,
) -> None:
    assert load_in_subprocess(tmp_path, OPENAI_API_KEY="sk-test") == ["from-file", False]


def test_a_forge_variable_is_still_decoded_above_the_file(tmp_path: Path) -> None:
    assert load_in_subprocess(tmp_path, FORGE_LLM__MODEL="from-env")[0] == "from-env"


def documented_models() -> list[type[BaseModel]]:
    modules = (forge.config.settings, forge.config.hook_settings, forge.config.prices)
    return [
        value
        for module in modules
        for value in vars(module).values()
        if isinstance(value, type)
        and issubclass(value, DocumentedModel)
        and value is not DocumentedModel
    ]


@pytest.mark.parametrize("model", documented_models(), ids=lambda model: model.__name__)
def test_descriptions_are_the_docstrings_pydantic_would_read(model: type[BaseModel]) -> None:
    expected = extract_docstrings_from_cls(model, use_inspect=True)
    assert expected, "the model documents its fields"
    assert attribute_docstrings(model) == expected
    described = {name: field.description for name, field in model.model_fields.items()}
    assert described == {name: expected.get(name) for name in model.model_fields}


def test_a_model_made_in_a_function_is_documented_too() -> None:
    class Local(DocumentedModel):
        size: int = 1
        """How big."""

        untold: str = ""

    assert Local.model_fields["size"].description == "How big."
    assert Local.model_fields["untold"].description is None
    assert Local.model_json_schema()["properties"]["size"]["description"] == "How big."


def test_every_settings_model_is_a_documented_model() -> None:
    # A section made from BaseModel would lose its descriptions (the settings screen's help).
    modules = (forge.config.settings, forge.config.hook_settings, forge.config.prices)
    plain = [
        value.__name__
        for module in modules
        for value in vars(module).values()
        if isinstance(value, type)
        and issubclass(value, BaseModel)
        and value.__module__ == module.__name__
        and not issubclass(value, DocumentedModel)
    ]
    assert plain == []
