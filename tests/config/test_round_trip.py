"""Saving keeps what the user wrote: comments, key order, quoting, unknown keys."""

from __future__ import annotations

import stat
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from forge.config.paths import config_path
from forge.config.round_trip import SAVED_FILE_HEADER
from forge.config.settings import Settings
from forge.config.store import load_settings, save_settings

COMMENTED = """\
# My Forge config. Do not lose this line.
llm:
  # the big one
  model: gpt-big  # trailing note
  base_url: 'http://127.0.0.1:8080/v1'
plugins:  # not Forge's
  enabled: [a, b]
  flag: yes
context:
  excluded_tools:
    - converse  # always keep
  warning_threshold: 0.8
"""


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _with(settings: Settings, **changes: dict[str, object]) -> Settings:
    updates = {
        section: getattr(settings, section).model_copy(update=values)
        for section, values in changes.items()
    }
    return settings.model_copy(update=updates)


def test_a_save_keeps_comments_key_order_and_spelling() -> None:
    path = _write(config_path(), COMMENTED)
    previous = load_settings(path)
    changed = _with(previous.settings, llm={"model": "gpt-small"}, ui={"theme": "nord"})
    save_settings(changed, previous, {"llm.model", "ui.theme"})
    text = path.read_text()
    # ruamel.yaml keeps an inline comment's column, so a longer value eats one space.
    expected = COMMENTED.replace("model: gpt-big  # trailing", "model: gpt-small # trailing")
    assert text == expected + "ui:\n  theme: nord\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_settings(path).settings == changed


def test_the_first_save_of_a_file_without_comments_writes_a_header() -> None:
    path = _write(config_path(), "ui:\n  theme: nord\n")
    previous = load_settings(path)
    save_settings(_with(previous.settings, llm={"model": "m"}), previous, {"llm.model"})
    text = path.read_text()
    assert text == SAVED_FILE_HEADER + "ui:\n  theme: nord\nllm:\n  model: m\n"
    # Later saves keep the header once, like any other comment.
    previous = load_settings(path)
    save_settings(_with(previous.settings, llm={"model": "n"}), previous, {"llm.model"})
    assert path.read_text() == SAVED_FILE_HEADER + "ui:\n  theme: nord\nllm:\n  model: n\n"


def test_strings_that_yaml_1_1_reads_as_other_types_are_quoted() -> None:
    previous = load_settings()
    tricky = ["yes", "on", "no", "12:30", "0755", "null", "~", "1e3", "true"]
    changed = _with(
        previous.settings,
        llm={"model": "on"},
        tools={"command_allowlist": tricky},
        ui={"theme": "no"},
    )
    save_settings(changed, previous, {"llm.model", "tools.command_allowlist", "ui.theme"})
    reloaded = load_settings()
    assert reloaded.error is None
    assert reloaded.settings == changed


# --- Hypothesis: load -> save -> load is the identity, and comments survive ------------------

_words = st.text(alphabet="abcdefghijklmnopqrstuvwxyz-_.:/ #'\"", min_size=1, max_size=20).filter(
    lambda text: text.strip() == text and text.strip()
)
_fractions = st.floats(min_value=0.01, max_value=1.0, allow_nan=False).map(lambda x: round(x, 3))


@st.composite
def _changes(draw: st.DrawFn) -> tuple[dict[str, dict[str, object]], set[str]]:
    warning = draw(_fractions)
    above = st.floats(min_value=warning, max_value=1.0)
    auto = draw(above.map(lambda value: max(warning, round(value, 3))))
    pool: dict[str, dict[str, object]] = {
        "llm": {
            "model": draw(_words),
            "summarization_model": draw(st.one_of(st.just(""), _words)),
            "max_retries": draw(st.integers(min_value=0, max_value=20)),
        },
        "context": {
            "warning_threshold": warning,
            "auto_summary_threshold": auto,
            "max_tokens": draw(st.one_of(st.none(), st.integers(min_value=1, max_value=10**6))),
            "excluded_tools": draw(st.lists(_words, max_size=4)),
        },
        "tools": {"command_allowlist": draw(st.lists(_words, max_size=4))},
        "ui": {"show_reasoning": draw(st.booleans()), "theme": draw(_words)},
    }
    chosen: dict[str, dict[str, object]] = {}
    keys: set[str] = set()
    for section, values in pool.items():
        for name, value in values.items():
            # The two thresholds are checked against each other: change both or neither.
            if name == "auto_summary_threshold":
                take = "context.warning_threshold" in keys
            else:
                take = draw(st.booleans())
            if take:
                chosen.setdefault(section, {})[name] = value
                keys.add(f"{section}.{name}")
    return chosen, keys


_FILES = st.sampled_from(
    [
        "",
        COMMENTED,
        "# only a comment\n",
        "ui:\n  theme: nord\n",
        "context:\n  warning_threshold: 0.5\n  auto_summary_threshold: 0.6  # low\n",
    ]
)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(original=_FILES, change=_changes())
def test_load_save_load_round_trips_and_keeps_comments(
    original: str, change: tuple[dict[str, dict[str, object]], set[str]]
) -> None:
    path = _write(config_path(), original)
    previous = load_settings(path)
    assert previous.error is None
    values, keys = change
    changed = _with(previous.settings, **values)
    save_settings(changed, previous, keys)
    reloaded = load_settings(path)
    assert reloaded.error is None, reloaded.error
    assert reloaded.settings == changed
    text = path.read_text()
    for line in original.splitlines():
        if line.lstrip().startswith("#"):
            assert line in text
    # Unknown keys survive untouched.
    if "plugins" in original:
        assert yaml.safe_load(text)["plugins"] == {"enabled": ["a", "b"], "flag": True}


def test_loading_does_not_import_ruamel_yaml() -> None:
    """Start-up time: the round-trip library is only needed to save."""
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from forge.config.store import load_settings\n"
        "load_settings()\n"
        "assert 'ruamel.yaml' not in sys.modules, 'ruamel.yaml imported by a load'\n"
    )
    root = Path(__file__).resolve().parents[2]
    completed = subprocess.run(
        [sys.executable, "-c", script], cwd=root, capture_output=True, text=True, check=False
    )
    assert completed.returncode == 0, completed.stderr
