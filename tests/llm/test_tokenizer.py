"""The offline tokenizer: real tiktoken encodings from packaged data, counted per message."""

from __future__ import annotations

import gc
import gzip
import hashlib
import json
import os
import socket
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import tiktoken
import tiktoken_ext.openai_public

from forge.llm.messages import Message, ToolCall, assistant, system, tool_result, user
from forge.llm.protocols import TokenCounter, ToolSpec
from forge.llm.tokenizer import (
    ENCODING_SHA256,
    MESSAGE_FRAMING_TOKENS,
    REPLY_PRIMING_TOKENS,
    TOOL_CALL_FRAMING_TOKENS,
    CharEstimateCounter,
    TiktokenCounter,
    TokenizerDataError,
    encoding_cache_dir,
    encoding_for_model,
    ensure_encoding_file,
    extract_encoding_file,
    forget_encodings,
    get_encoding,
)

REPOSITORY_ROOT = Path(__file__).resolve().parents[2]
TRAJECTORY = (
    REPOSITORY_ROOT.parent
    / "shared"
    / "corpus"
    / "trajectories"
    / "sweagent__marshmallow-1867__function_calling_replace_from_source.messages.json"
)

SAMPLE_TEXTS = (
    "hello world",
    "def add(a: int, b: int) -> int:\n    return a + b\n",
    "naïve café — 日本語のテキスト 🚀 Ünïcödé",
    "   leading and trailing   \n\n\t\r\n  ",
    "numbers 1234567890 and 3.14159, contractions I'M you're they'LL",
    "literal special token text: <|endoftext|> <|endofprompt|>",
    "path/to/file.py:42: error: Incompatible types in assignment",
)


@pytest.fixture(autouse=True)
def private_tiktoken_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """tiktoken's loader keeps its own copy of what it reads; keep that copy in tmp_path too."""
    path = tmp_path / "tiktoken-cache"
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(path))
    return path


@pytest.fixture
def network_blocked(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Any attempt to resolve a host or open a connection in this process fails loudly."""

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise OSError("network access attempted during an offline test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    yield


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# --- encodings --------------------------------------------------------------------------------


def test_hello_world_has_openais_token_ids() -> None:
    assert get_encoding("o200k_base").encode("hello world") == [24912, 2375]
    assert get_encoding("cl100k_base").encode("hello world") == [15339, 1917]


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_encoding_equals_the_one_tiktoken_builds_itself(
    name: str, private_tiktoken_cache: Path, network_blocked: None
) -> None:
    # Give tiktoken its own cache entry (keyed by the SHA-1 of the official URL) so its own
    # constructor, with its own pattern and special tokens, runs without a download.
    url = f"https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"
    private_tiktoken_cache.mkdir(parents=True, exist_ok=True)
    cache_key = hashlib.sha1(url.encode()).hexdigest()
    (private_tiktoken_cache / cache_key).write_bytes(ensure_encoding_file(name).read_bytes())
    reference = tiktoken.Encoding(**tiktoken_ext.openai_public.ENCODING_CONSTRUCTORS[name]())
    ours = get_encoding(name)

    assert ours.name == reference.name
    assert ours.n_vocab == reference.n_vocab
    assert ours.special_tokens_set == reference.special_tokens_set
    texts = list(SAMPLE_TEXTS)
    if TRAJECTORY.is_file():
        texts += [m["content"] or "" for m in json.loads(TRAJECTORY.read_text())]
    for text in texts:
        assert ours.encode_ordinary(text) == reference.encode_ordinary(text)
        assert ours.encode(text, allowed_special="all") == reference.encode(
            text, allowed_special="all"
        )


def test_encoding_for_model_follows_the_model_family() -> None:
    assert encoding_for_model("openai/gpt-4o").name == "o200k_base"
    assert encoding_for_model("gpt-4-0613").name == "cl100k_base"
    assert encoding_for_model("some-local-model").name == "o200k_base"


def test_unknown_encoding_is_rejected_with_the_available_names() -> None:
    with pytest.raises(ValueError, match="o200k_base"):
        get_encoding("p50k_base")


def test_nothing_is_downloaded_with_an_empty_cache_and_no_network(tmp_path: Path) -> None:
    guard_directory = tmp_path / "guard"
    guard_directory.mkdir()
    (guard_directory / "sitecustomize.py").write_text(
        textwrap.dedent(
            """
            import socket

            def _refuse(*args, **kwargs):
                raise OSError("network access attempted during an offline test")

            socket.socket.connect = _refuse
            socket.socket.connect_ex = _refuse
            socket.getaddrinfo = _refuse
            socket.create_connection = _refuse
            """
        )
    )
    script = textwrap.dedent(
        """
        import json, socket, sys
        try:
            socket.getaddrinfo("example.com", 443)
        except OSError:
            pass
        else:
            sys.exit("the network guard is not active")
        from forge.llm.tokenizer import encoding_cache_dir, get_encoding
        print(json.dumps({
            "o200k": get_encoding("o200k_base").encode("hello world"),
            "cl100k": get_encoding("cl100k_base").encode("hello world"),
            "cache": str(encoding_cache_dir()),
        }))
        """
    )
    cache_home = tmp_path / "fresh-cache"
    tiktoken_cache = tmp_path / "fresh-tiktoken-cache"
    cache_home.mkdir()
    tiktoken_cache.mkdir()
    environment = {
        key: value
        for key, value in os.environ.items()
        if key not in {"DATA_GYM_CACHE_DIR", "PYTHONPATH"}
    }
    environment |= {
        "XDG_CACHE_HOME": str(cache_home),
        "TIKTOKEN_CACHE_DIR": str(tiktoken_cache),
        "PYTHONPATH": os.pathsep.join([str(guard_directory), str(REPOSITORY_ROOT)]),
    }
    completed = subprocess.run(
        [sys.executable, "-c", script],
        env=environment,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert completed.returncode == 0, completed.stderr
    result = json.loads(completed.stdout)
    assert result["o200k"] == [24912, 2375]
    assert result["cl100k"] == [15339, 1917]
    extracted = Path(result["cache"])
    assert extracted.is_relative_to(cache_home)
    for name, expected in ENCODING_SHA256.items():
        assert sha256_of(extracted / f"{name}.tiktoken") == expected


def test_extraction_lands_in_the_forge_cache_directory() -> None:
    path = ensure_encoding_file("cl100k_base")
    assert path.parent == encoding_cache_dir()
    assert path.parent.is_relative_to(Path(os.environ["XDG_CACHE_HOME"]))
    assert sha256_of(path) == ENCODING_SHA256["cl100k_base"]


def test_a_tampered_cache_file_is_replaced_by_a_fresh_extraction() -> None:
    path = ensure_encoding_file("cl100k_base")
    path.write_bytes(b"Z2FyYmFnZQ== 0\n")  # a well-formed but wrong vocabulary
    forget_encodings()

    encoding = get_encoding("cl100k_base")

    assert sha256_of(path) == ENCODING_SHA256["cl100k_base"]
    assert encoding.encode("hello world") == [15339, 1917]


def test_damaged_packaged_data_raises_a_clear_error(tmp_path: Path) -> None:
    wrong_vocabulary = tmp_path / "wrong.tiktoken.gz"
    wrong_vocabulary.write_bytes(gzip.compress(b"aGVsbG8= 0\n"))
    not_gzip = tmp_path / "not-gzip.tiktoken.gz"
    not_gzip.write_bytes(b"this is not gzip data")
    destination = tmp_path / "out" / "o200k_base.tiktoken"

    with pytest.raises(TokenizerDataError, match="SHA-256"):
        extract_encoding_file("o200k_base", wrong_vocabulary, destination)
    with pytest.raises(TokenizerDataError, match="cannot decompress"):
        extract_encoding_file("o200k_base", not_gzip, destination)
    assert not destination.exists()


# --- counting -------------------------------------------------------------------------------


def test_both_counters_satisfy_the_token_counter_protocol() -> None:
    assert isinstance(TiktokenCounter("gpt-4o"), TokenCounter)
    assert isinstance(CharEstimateCounter(), TokenCounter)


def test_count_text_is_the_number_of_encoded_tokens() -> None:
    counter = TiktokenCounter("gpt-4o")
    encoding = get_encoding("o200k_base")
    for text in SAMPLE_TEXTS:
        assert counter.count_text(text) == len(encoding.encode_ordinary(text))


def test_a_plain_message_costs_framing_plus_role_plus_content() -> None:
    counter = TiktokenCounter("gpt-4")
    content = "Explain the difference between a list and a tuple."
    expected = MESSAGE_FRAMING_TOKENS + counter.count_text("user") + counter.count_text(content)
    assert counter.count_message(user(content)) == expected


def test_tool_call_arguments_are_counted() -> None:
    counter = TiktokenCounter("gpt-4o")
    small_arguments = json.dumps({"path": "a.py"})
    big_arguments = json.dumps({"path": "a.py", "content": "print('x')\n" * 400})
    small = assistant(tool_calls=(ToolCall("call_1", "write_file", small_arguments),))
    big = assistant(tool_calls=(ToolCall("call_1", "write_file", big_arguments),))

    difference = counter.count_message(big) - counter.count_message(small)

    assert difference == counter.count_text(big_arguments) - counter.count_text(small_arguments)
    assert difference > 1000
    without_calls = counter.count_message(assistant())
    assert counter.count_message(small) == (
        without_calls
        + TOOL_CALL_FRAMING_TOKENS
        + counter.count_text("write_file")
        + counter.count_text(small_arguments)
    )


def test_a_tool_result_counts_its_content_and_call_id() -> None:
    counter = TiktokenCounter("gpt-4o")
    call = ToolCall("call_abc123", "read_file", "{}")
    result = tool_result(call, "file contents here")
    assert counter.count_message(result) == (
        MESSAGE_FRAMING_TOKENS
        + counter.count_text("tool")
        + counter.count_text("file contents here")
        + counter.count_text("call_abc123")
    )


def test_reasoning_is_not_counted_because_it_is_never_sent() -> None:
    counter = TiktokenCounter("gpt-4o")
    plain = Message(role="assistant", content="done")
    with_reasoning = Message(role="assistant", content="done", reasoning="long thoughts " * 100)
    assert counter.count_message(with_reasoning) == counter.count_message(plain)


def test_count_messages_adds_reply_priming_once() -> None:
    counter = TiktokenCounter("gpt-4o")
    messages = [system("You are terse."), user("hello world")]
    individual = sum(counter.count_message(message) for message in messages)
    assert counter.count_messages(messages) == individual + REPLY_PRIMING_TOKENS
    assert counter.count_messages([]) == 0


def test_a_counted_message_is_served_from_the_cache_the_second_time() -> None:
    counter = TiktokenCounter("gpt-4o")
    message = user("count me once " * 50)

    first = counter.count_message(message)
    assert (counter.cache_misses, counter.cache_hits) == (1, 0)
    assert counter.is_cached(message)
    second = counter.count_message(message)

    assert second == first
    assert (counter.cache_misses, counter.cache_hits) == (1, 1)


def test_recounting_a_growing_conversation_encodes_only_new_messages() -> None:
    counter = TiktokenCounter("gpt-4o")
    conversation: list[Message] = [system("system prompt")]
    for turn in range(10):
        conversation.append(user(f"question {turn}"))
        counter.count_messages(conversation)
    assert counter.cache_misses == len(conversation)
    assert counter.cached_message_count == len(conversation)


def test_an_evolved_message_is_a_new_object_and_is_counted_afresh() -> None:
    counter = TiktokenCounter("gpt-4o")
    original = user("short")
    counter.count_message(original)
    changed = original.evolve(content="a much longer replacement text than before")
    assert counter.count_message(changed) > counter.count_message(original)
    assert counter.cache_misses == 2


def test_the_cache_forgets_messages_that_are_gone() -> None:
    counter = TiktokenCounter("gpt-4o")
    message = user("temporary")
    counter.count_message(message)
    assert counter.cached_message_count == 1
    del message
    gc.collect()
    assert counter.cached_message_count == 0


def test_tool_definitions_cost_tokens_growing_with_their_schema() -> None:
    counter = TiktokenCounter("gpt-4o")
    bare = ToolSpec("read_file", "Read a file.")
    described = ToolSpec(
        "read_file",
        "Read a file.",
        {
            "type": "object",
            "properties": {"path": {"type": "string", "description": "Path to read"}},
            "required": ["path"],
        },
    )
    assert counter.count_tools([]) == 0
    assert counter.count_tools([described]) > counter.count_tools([bare]) > 0
    assert counter.count_tools([bare, described]) > counter.count_tools([described])


def test_char_estimate_counter_gives_exact_predictable_numbers() -> None:
    counter = CharEstimateCounter()
    assert counter.count_text("") == 0
    assert counter.count_text("abcd") == 1
    assert counter.count_text("abcde") == 2
    message = assistant("x" * 40, tool_calls=(ToolCall("id", "name", "a" * 8),))
    assert counter.count_message(message) == 3 + 10 + 1 + 2
    result = tool_result(ToolCall("call", "name"), "y" * 4)
    assert counter.count_message(result) == 3 + 1 + 1
    assert counter.count_messages([message, result]) == 16 + 5 + 3
    assert counter.count_messages([]) == 0


def test_char_estimate_counter_is_configurable() -> None:
    counter = CharEstimateCounter(1, per_message_overhead=0, reply_priming=0)
    assert counter.count_messages([user("abc"), user("de")]) == 5
    with pytest.raises(ValueError):
        CharEstimateCounter(0)
