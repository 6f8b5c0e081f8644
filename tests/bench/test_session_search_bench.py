"""The session-search bench section's corpus: each planted word is found in its own session
only, and a word only in tool output needs `include_tools` (the section's check, small)."""

from __future__ import annotations

from pathlib import Path

from bench.session_search import planted_word, write_sessions
from forge.agent.history.session_file import SessionStore
from forge.agent.history.session_search import SessionSearch


def test_planted_words_are_found_in_their_own_session(tmp_path: Path, workspace: Path) -> None:
    store = SessionStore(tmp_path / "sessions")
    ids = write_sessions(store, workspace, count=3, messages=20)
    search = SessionSearch(store)
    for number, session_id in enumerate(ids):
        assert [hit.info.id for hit in search.search(planted_word(number), workspace)] == [
            session_id
        ]
    assert search.search("toolonly0001", workspace) == []
    assert len(search.search("toolonly0001", workspace, include_tools=True)) == 1
