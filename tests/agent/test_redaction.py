"""The one redaction every artefact goes through (`forge.config.secrets`): keys from the file,
the environment and earlier settings of this process are masked in the session file, summary
files, the log and `forge run`'s output."""

from __future__ import annotations

import io
import logging
from pathlib import Path

import pytest
from pydantic import SecretStr

from forge.config.paths import config_path
from forge.config.secrets import KNOWN_SECRETS, redact, settings_secrets
from forge.config.settings import LLMSettings, Settings
from forge.context.summary_archive import SummaryArchive, SummaryRecord
from forge.headless.output import TextWriter
from forge.llm.messages import user
from forge.session.build import build_session
from forge.session.logs import configure_file_logging
from forge.session.parts import secrets_of
from tests.support.openai_server import OpenAIServer

OLD_KEY = "sk-old-key-before-the-change-111"
NEW_KEY = "sk-new-key-after-the-change-222"
FILE_KEY = "sk-file-key-overridden-333"


def settings_with(server: OpenAIServer, key: str) -> Settings:
    llm = LLMSettings.model_validate(
        {"base_url": server.base_url, "api_key": SecretStr(key), "max_retries": 0}
    )
    return Settings(llm=llm)


def test_the_file_key_is_known_even_when_the_environment_overrides_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", NEW_KEY)
    settings = Settings(llm=LLMSettings(api_key=SecretStr(NEW_KEY)))
    found = settings_secrets(settings, {"llm": {"api_key": FILE_KEY}})
    assert set(found) == {NEW_KEY, FILE_KEY}


def test_a_key_containing_another_is_masked_whole() -> None:
    KNOWN_SECRETS.add(["sk-abcd", "sk-abcd-longer"])
    assert redact("x sk-abcd-longer y sk-abcd z") == "x [redacted] y [redacted] z"
    KNOWN_SECRETS.add(["ab"])  # too short to be a key: masking it would garble everything
    assert redact("abc") == "abc"


async def test_earlier_keys_stay_masked_after_a_settings_change(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    session = build_session(settings_with(llm_server, OLD_KEY), workspace)
    try:
        session.apply_settings(settings_with(llm_server, NEW_KEY))
        session.agent.conversation.append(user(f"output quoting {OLD_KEY} and {NEW_KEY}"))
    finally:
        await session.aclose()
    text = session.store.path_for(session.session_id).read_text()
    assert OLD_KEY not in text and NEW_KEY not in text
    assert "output quoting [redacted] and [redacted]" in text


def test_summary_files_are_redacted(tmp_path: Path) -> None:
    KNOWN_SECRETS.add([FILE_KEY])
    archive = SummaryArchive(tmp_path / "summaries")
    path = archive.write(
        SummaryRecord(
            message_id="m1",
            strategy="threshold",
            model="gpt-4o-mini",
            trigger="threshold",
            tokens_in=100,
            tokens_out=10,
            replaced_ids=["a", "b"],
            text=f"The model ran `cat config.yaml`, which printed api_key: {FILE_KEY}.",
        )
    )
    text = path.read_text()
    assert FILE_KEY not in text and "api_key: [redacted]." in text


def test_the_log_and_the_output_mask_every_known_key(tmp_path: Path) -> None:
    secrets_of(
        Settings(llm=LLMSettings(api_key=SecretStr(NEW_KEY))), {"llm": {"api_key": FILE_KEY}}
    )
    log = configure_file_logging(path=tmp_path / "forge.log")
    root = logging.getLogger("forge")
    added = root.handlers[-1]
    try:
        logging.getLogger("forge.test_redaction").warning(
            "provider said: bad key %s (file has %s)", NEW_KEY, FILE_KEY
        )
        added.flush()
    finally:
        root.removeHandler(added)
        added.close()
    assert "bad key *** (file has ***)" in log.read_text()

    out, err = io.StringIO(), io.StringIO()
    writer = TextWriter(out, err, describe=lambda call: call.name)
    writer.write_out(f"printing {FILE_KEY}\n")
    writer.write_err(f"error mentioning {NEW_KEY}")
    assert out.getvalue() == "printing ***\n"
    assert err.getvalue() == "error mentioning ***\n"


async def test_a_file_key_edited_during_the_session_is_known_after_the_reload(
    llm_server: OpenAIServer, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", NEW_KEY)  # the environment overrides the file
    config = config_path()
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f"llm:\n  api_key: {FILE_KEY}\n")
    session = build_session(settings_with(llm_server, NEW_KEY), workspace)
    edited_key = "sk-file-key-edited-later-444"
    try:
        config.write_text(f"llm:\n  api_key: {edited_key}\n")
        session.apply_settings(settings_with(llm_server, NEW_KEY))
        session.agent.conversation.append(user(f"cat says {FILE_KEY} then {edited_key}"))
    finally:
        await session.aclose()
    text = session.store.path_for(session.session_id).read_text()
    assert FILE_KEY not in text and edited_key not in text
    assert "cat says [redacted] then [redacted]" in text
