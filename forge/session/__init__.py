"""A running session: the one owner of its parts and the verbs every front end uses.

`build_session` (forge/session/build.py) makes a `Session` (forge/session/core.py); the TUI
and `forge run` drive it through its verbs (`run_turn`, `compact`, `undo`, `apply_settings`,
…). See docs/adr/0041-session-api.md. Import from the modules, not from this package.
"""
