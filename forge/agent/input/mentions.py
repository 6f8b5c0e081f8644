"""`@path` mentions: files the user attaches to a message (docs/adr/0030).

`@src/app.py` attaches the whole file, `@src/app.py:40-80` lines 40 to 80 (`:40` one line,
`:40-` to the end), `@"a b.txt"` a path with spaces (a range goes after the closing quote).
An `@` counts only at the start of the text or after whitespace or an opening bracket, so
`a@b.com` is not a mention; `\\@x` is a literal `@x` (the backslash is dropped) and nothing in
a fenced code block is a mention. The mention stays in the text the model reads; the file
follows the message as a numbered `<attached_file>` block, cut to its head and tail with the
ingest cap's rule when it is over its share of the budget, so the context manager counts it
as part of the user message.

A mentioned image (`@shot.png`: png, jpg, gif, webp, bmp) is attached as an image, scaled for
the provider, not as text (docs/adr/0055, part 2); so is an image file whose path is dropped or
pasted into the prompt (`forge.agent.input.dropped_images`).

A mention that names nothing is left as plain text: when it looks like a path (quoted, with a
`/` or `.`, or a line range) a problem line says why it was not attached and the message is
sent without it; `@property` or `@alice` is taken for what it most likely is, plain words.
Paths are confined to the workspace (`resolve_in_workspace`); a file `.gitignore` hides from
completion is still attached when named explicitly, as `read_file` would read it.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from forge.agent.input.dropped_images import MAX_DROPPED, dropped_images, may_name_image
from forge.agent.tools.base import ToolError
from forge.agent.tools.image_files import read_image_file
from forge.agent.tools.read_file import numbered_lines
from forge.agent.tools.text_files import read_regular_bytes
from forge.agent.tools.workspace import display_path, resolve_in_workspace
from forge.context.strategies.ingest_cap import MINIMUM_CAP_TOKENS, head_and_tail
from forge.llm.image_parts import ImagePart, attachment_line
from forge.llm.images import ImageProvider, is_image_name
from forge.llm.protocols import TokenCounter

MAX_ATTACH_BYTES = 8 * 1024 * 1024
"""A bigger file is not read at all (even for a line range): name a smaller one."""
TOTAL_SHARES = 2
"""All the attachments of one message together take at most this many single-file caps."""

_MENTION = re.compile(
    r"""(?:(?<=[\s(\[{])|^)(?P<escape>\\)?@
        (?:"(?P<quoted>[^"\n]+)"(?P<quoted_range>:\d+(?:-\d*)?)?|(?P<bare>[^\s"]+))""",
    re.VERBOSE,
)
_RANGE = re.compile(r"^(?P<path>.+?):(?P<start>\d+)(?:-(?P<end>\d*))?$")
_TRAILING_PUNCTUATION = ".,;:!?)]}>'\""
_FENCE = re.compile(r"^[ \t]*(```|~~~)[^\n]*\n.*?(?:^[ \t]*\1[ \t]*$|\Z)", re.DOTALL | re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Mention:
    """One `@path` in a message: the path, an optional line range, and where it is."""

    path: str
    start_line: int | None = None
    end_line: int | None = None
    """Inclusive; None with a `start_line` means "to the end"."""
    quoted: bool = False
    span: tuple[int, int] = (0, 0)
    """Where `@...` is in the text (end exclusive)."""

    @property
    def looks_like_path(self) -> bool:
        """Quoted, with a line range, or with a `/` or `.`: meant as a file, not a word."""
        return self.quoted or self.start_line is not None or "/" in self.path or "." in self.path

    @property
    def label(self) -> str:
        """How the user wrote it, normalised: `@src/app.py:40-80`, `@"a b.txt"`."""
        path = f'"{self.path}"' if self.quoted else self.path
        return f"@{path}{_range_suffix(self.start_line, self.end_line)}"


@dataclass(frozen=True, slots=True)
class ParsedText:
    """The mentions of a text, and the text with its `\\@` escapes resolved."""

    mentions: tuple[Mention, ...]
    text: str


def parse_mentions(text: str) -> ParsedText:
    """The mentions in `text`, in order, and `text` with `\\@` turned into `@`."""
    fences = [match.span() for match in _FENCE.finditer(text)]
    mentions: list[Mention] = []
    escapes: list[int] = []
    for match in _MENTION.finditer(text):
        if any(start <= match.start() < end for start, end in fences):
            continue
        if match.group("escape"):
            escapes.append(match.start())
            continue
        mention = _mention_of(match)
        if mention is not None:
            mentions.append(mention)
    unescaped = text
    for position in reversed(escapes):
        unescaped = unescaped[:position] + unescaped[position + 1 :]
    return ParsedText(tuple(mentions), unescaped)


def _mention_of(match: re.Match[str]) -> Mention | None:
    start = match.start()
    if (quoted := match.group("quoted")) is not None:
        first, last = _parse_range((match.group("quoted_range") or "")[1:])
        return Mention(quoted, first, last, quoted=True, span=(start, match.end()))
    bare = match.group("bare")
    stripped = bare.rstrip(_TRAILING_PUNCTUATION)
    if not stripped:
        return None
    end = match.end() - (len(bare) - len(stripped))
    path, first, last = stripped, None, None
    if ranged := _RANGE.match(stripped):
        path = ranged.group("path")
        first, last = _parse_range(stripped[len(path) + 1 :])
    return Mention(path, first, last, span=(start, end))


def _parse_range(text: str) -> tuple[int | None, int | None]:
    """ "40-80" -> (40, 80); "40" -> (40, 40); "40-" -> (40, None); "" -> (None, None)."""
    if not text:
        return None, None
    first, dash, last = text.partition("-")
    start = int(first)
    if not dash:
        return start, start
    return start, int(last) if last else None


def _range_suffix(first: int | None, last: int | None) -> str:
    if first is None:
        return ""
    if last == first:
        return f":{first}"
    return f":{first}-{last if last is not None else ''}"


@dataclass(frozen=True, slots=True)
class Attachment:
    """A file attached to a message: what was attached and what it costs."""

    mention: Mention
    path: str
    """Workspace-relative, POSIX style."""
    first_line: int
    last_line: int
    total_lines: int
    tokens: int
    """Tokens of the block added to the message."""
    capped: bool
    """Cut to its head and tail to fit its share of the budget."""
    block: str

    def describe(self) -> str:
        """E.g. "attached src/app.py (lines 40-80, 312 tokens)"."""
        whole = self.first_line <= 1 and self.last_line == self.total_lines
        if whole:
            lines = f"{self.total_lines} line{'s' if self.total_lines != 1 else ''}"
        elif self.first_line == self.last_line:
            lines = f"line {self.first_line}"
        else:
            lines = f"lines {self.first_line}-{self.last_line}"
        cut = ", cut to head and tail" if self.capped else ""
        return f"attached {self.path} ({lines}, {self.tokens:,} tokens{cut})"


@dataclass(frozen=True, slots=True)
class Expansion:
    """A message with its mentions expanded: the text to send, what was attached, and one
    line per mention that could not be attached (the message is sent without it)."""

    text: str
    attachments: tuple[Attachment, ...] = ()
    problems: tuple[str, ...] = ()
    images: tuple[ImagePart, ...] = ()
    """Images attached (mentioned or dropped), sent with the message as images."""

    def attached_lines(self) -> tuple[str, ...]:
        """One line per attached file and image, as the chat shows them."""
        return tuple(attachment.describe() for attachment in self.attachments) + tuple(
            attachment_line(image) for image in self.images
        )

    @property
    def tokens(self) -> int:
        """Tokens the attachments add."""
        return sum(attachment.tokens for attachment in self.attachments)


def attachment_limit(ingest_max_share: float, max_tokens: int) -> int:
    """The most tokens one attached file may take: the ingest cap's share of the budget."""
    return max(MINIMUM_CAP_TOKENS, int(ingest_max_share * max_tokens))


def expand_mentions(
    text: str,
    workspace: Path,
    *,
    counter: TokenCounter,
    limit_tokens: int,
    image_provider: ImageProvider = "openai",
) -> Expansion:
    """`text` with each mentioned file appended, each at most `limit_tokens` and all together
    at most `TOTAL_SHARES` times that; mentioned and dropped images scaled for
    `image_provider`. Blocking (reads files, counts tokens): call it in a thread from an
    event loop."""
    parsed = parse_mentions(text)
    attachments: list[Attachment] = []
    problems: list[str] = []
    images: list[ImagePart] = []
    seen: set[tuple[str, int | None, int | None]] = set()
    remaining = limit_tokens * TOTAL_SHARES
    for mention in parsed.mentions:
        try:
            path = resolve_in_workspace(workspace, mention.path)
        except ToolError as error:
            if mention.looks_like_path or os.path.lexists(workspace / mention.path):
                problems.append(f"{mention.label} not attached: {error}")
            continue
        shown = display_path(workspace, path)
        key = (shown, mention.start_line, mention.end_line)
        if key in seen:
            continue
        if not _exists(path):
            if mention.looks_like_path:
                problems.append(f"{mention.label} not attached: no file '{shown}' in the workspace")
            continue
        if is_image_name(path.name) and not path.is_dir():
            seen.add(key)
            if len(images) >= MAX_DROPPED:
                problems.append(f"{mention.label} not attached: at most {MAX_DROPPED} images")
                continue
            try:
                images.append(read_image_file(path, shown, image_provider))
            except ToolError as error:
                problems.append(f"{mention.label} not attached: {error}")
            continue
        if remaining < MINIMUM_CAP_TOKENS:
            problems.append(
                f"{mention.label} not attached: the files attached before it already take "
                f"{limit_tokens * TOTAL_SHARES - remaining:,} tokens"
            )
            continue
        try:
            attachment = _attach(mention, path, shown, counter, min(limit_tokens, remaining))
        except ToolError as error:
            problems.append(f"{mention.label} not attached: {error}")
            continue
        except OSError as error:
            problems.append(f"{mention.label} not attached: {error.strerror or error}")
            continue
        seen.add(key)
        remaining -= attachment.tokens
        attachments.append(attachment)
    already = {image.name for image in images}
    dropped = dropped_images(parsed.text, image_provider, already, MAX_DROPPED - len(images))
    images.extend(dropped.images)
    problems.extend(dropped.problems)
    if not attachments:
        return Expansion(parsed.text, (), tuple(problems), tuple(images))
    blocks = "\n\n".join(attachment.block for attachment in attachments)
    return Expansion(
        f"{parsed.text}\n\n{blocks}", tuple(attachments), tuple(problems), tuple(images)
    )


def _exists(path: Path) -> bool:
    try:
        return os.path.lexists(path) and path.exists()
    except OSError:
        return True  # let the read say what is wrong (e.g. permission denied)


def _attach(
    mention: Mention, path: Path, shown: str, counter: TokenCounter, limit: int
) -> Attachment:
    if path.is_dir():
        raise ToolError(f"'{shown}' is a directory; mention the files in it")
    try:
        size = os.stat(path).st_size
    except OSError as error:
        raise ToolError(f"cannot read '{shown}': {error.strerror}") from None
    if size > MAX_ATTACH_BYTES:
        raise ToolError(
            f"'{shown}' is {size:,} bytes, more than the {MAX_ATTACH_BYTES:,} an attachment "
            "may read; ask the model to read the part you need"
        )
    data = read_regular_bytes(path, shown)
    if data is None:
        raise ToolError(f"no file '{shown}' in the workspace")
    numbered = numbered_lines(data, shown, mention.start_line, mention.end_line)
    _, _, body = numbered.text.partition("\n")
    capped_body = head_and_tail(body, limit, counter, tool="read_file") if body else "(empty)"
    lines = f"{numbered.first}-{numbered.last}"
    block = (
        f'<attached_file path="{shown}" lines="{lines}" total_lines="{numbered.total}">\n'
        f"{capped_body}\n</attached_file>"
    )
    return Attachment(
        mention=mention,
        path=shown,
        first_line=numbered.first,
        last_line=numbered.last,
        total_lines=numbered.total,
        tokens=counter.count_text(block),
        capped=(bool(body) and capped_body != body) or numbered.elided,
        block=block,
    )


_BLOCK = re.compile(
    r'\n\n<attached_file path="(?P<path>[^"\n]*)" lines="(?P<lines>[\d-]+)" '
    r'total_lines="(?P<total>\d+)">\n.*?\n</attached_file>(?=\n\n<attached_file |\Z)',
    re.DOTALL,
)


def split_attachments(content: str) -> tuple[str, list[str]]:
    """A sent user message's content as typed, and one "attached …" line per file block
    it ends with (for showing a resumed conversation); (content, []) when it has none."""
    first = None
    lines: list[str] = []
    position = len(content)
    for match in _BLOCK.finditer(content):
        if first is None:
            first = match.start()
        first_line, _, last_line = match.group("lines").partition("-")
        span = (
            f"line {first_line}" if first_line == last_line else f"lines {first_line}-{last_line}"
        )
        lines.append(f"attached {match.group('path')} ({span})")
        position = match.end()
    if first is None or position != len(content):
        return content, []
    return content[:first], lines


def has_mentions(text: str) -> bool:
    """Whether `text` has a mention (or a `\\@` escape) or a dropped image path to expand;
    cheap, no file access."""
    if may_name_image(text):
        return True
    if "@" not in text:
        return False
    parsed = parse_mentions(text)
    return bool(parsed.mentions) or parsed.text != text
