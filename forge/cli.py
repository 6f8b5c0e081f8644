"""The `forge` command: the TUI by default, `forge run` headless, `forge config …`, `forge
sessions`. Imports of heavy parts happen inside each command so `--help` stays fast."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from forge import __version__

PERMISSION_MODES = ("read-only", "ask", "accept-edits", "auto")
"""`--mode` choices (the same as `forge.agent.modes.MODE_NAMES`, not imported: `--help` stays
fast)."""


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="forge",
        description="A terminal coding agent with context management that never hits the wall.",
    )
    parser.add_argument("--version", action="version", version=f"forge {__version__}")
    parser.add_argument("--workspace", "-C", default=".", help="workspace directory (default: .)")
    parser.add_argument(
        "--continue",
        dest="continue_session",
        action="store_true",
        help="reopen the latest session for this workspace",
    )
    parser.add_argument("--resume", metavar="ID", help="reopen the session with this id")
    parser.add_argument(
        "--fork",
        action="store_true",
        help="with --resume or --continue: continue in a new session holding that session's "
        "conversation (the original stays as it is)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    run = sub.add_parser("run", help="run one task headless (scripts and CI)")
    run.add_argument("task", nargs="?", help="the task text ('-': read it from stdin)")
    run.add_argument("--task-file", help="read the task from this file")
    run.add_argument("--yes", "-y", action="store_true", help="auto-approve every tool call")
    run.add_argument(
        "--mode",
        choices=PERMISSION_MODES,
        help="permission mode: read-only, ask, accept-edits or auto (default: tools.mode; "
        "--yes is auto)",
    )
    run.add_argument(
        "--trust-workspace",
        action="store_true",
        help="run the workspace's own definitions (MCP servers, hooks, skills' allowed-tools) "
        "for this run, trusted or not (see `forge trust`)",
    )
    run.add_argument(
        "--no-hooks",
        action="store_true",
        help="run no hook (config.yaml's, .forge/hooks.json's, .claude/settings.json's)",
    )
    run.add_argument(
        "--output-format",
        choices=("text", "json", "stream-json", "forge-jsonl", "codex-json"),
        default=None,
        help="text: the final answer on stdout, progress on stderr (default); json: one "
        "result object at the end (Claude Code's); stream-json: one JSON message per line in "
        "Claude Code's shapes; forge-jsonl: Forge's own records; codex-json: the events of "
        "`codex exec --json`",
    )
    run.add_argument(
        "--include-partial-messages",
        action="store_true",
        help="stream-json: also the answer's deltas as `stream_event` messages",
    )
    run.add_argument(
        "--output",
        choices=("text", "jsonl"),
        default=None,
        help="older spelling: jsonl is --output-format forge-jsonl",
    )
    run.add_argument(
        "--output-last-message", metavar="FILE", help="also write the final answer to FILE"
    )
    run.add_argument(
        "--steer-file",
        metavar="PATH",
        help="steer the running task: each line appended to PATH (a file or FIFO) is added "
        "to the turn as a user message after the running tool call",
    )
    run.add_argument(
        "--max-turns", type=int, default=50, help="LLM calls at most (default 50; exit 3)"
    )
    run.add_argument(
        "--max-budget-usd",
        metavar="USD",
        help="stop once the run's requests have cost this much (exit 4)",
    )
    run.add_argument(
        "--timeout", type=float, default=None, help="seconds before giving up (exit 5)"
    )
    run.add_argument(
        "--ephemeral",
        action="store_true",
        help="write nothing that outlives the run: no session, checkpoint, log or cache",
    )
    run.add_argument("--model", help="override llm.model for this run")
    run.add_argument(
        "--image",
        action="append",
        default=[],
        metavar="PATH",
        help="attach this image to the task (repeatable; png, jpg, gif, webp, bmp)",
    )
    # Also accepted after `run`; SUPPRESS keeps the subparser from resetting a value given
    # before it (`forge --continue run …`).
    run.add_argument(
        "--continue",
        dest="continue_session",
        action="store_true",
        default=argparse.SUPPRESS,
        help="continue the latest session for this workspace",
    )
    run.add_argument(
        "--resume", metavar="ID", default=argparse.SUPPRESS, help="continue this session"
    )
    run.add_argument(
        "--workspace", "-C", default=argparse.SUPPRESS, help="workspace directory (default: .)"
    )
    acp = sub.add_parser(
        "acp", help="serve the Agent Client Protocol on stdio (editors: Zed, Toad; ADR 0044)"
    )
    acp.add_argument(
        "--trust-workspace",
        action="store_true",
        help="run the workspace's own definitions and the editor's MCP servers without asking",
    )
    acp.add_argument(
        "--max-turns", type=int, default=50, help="LLM calls at most per prompt (default 50)"
    )
    config = sub.add_parser("config", help="show, check or locate the config file")
    config.add_argument("action", choices=("path", "show", "validate"))
    sessions = sub.add_parser("sessions", help="list, search or rename saved sessions")
    sessions.add_argument(
        "--search",
        metavar="TEXT",
        help="the sessions whose title, name, messages or answers "
        "hold TEXT (any case), newest first, with the line holding it",
    )
    sessions.add_argument(
        "--all", action="store_true", help="--search also tool calls and their output"
    )
    sessions.add_argument(
        "--all-workspaces", action="store_true", help="every workspace's sessions, not only -C's"
    )
    sessions.add_argument(
        "--rename", nargs=2, metavar=("ID", "NAME"), help="give session ID the name NAME"
    )
    export = sub.add_parser(
        "export", help="print or write a saved session as Markdown (default), HTML or JSON"
    )
    export.add_argument("id", metavar="ID", help="the session (a whole id, or its start or end)")
    export.add_argument(
        "--format", choices=("md", "html", "json"), default="md", help="default: md"
    )
    export.add_argument("--output", "-o", metavar="PATH", help="write here (default: stdout)")
    trust = sub.add_parser(
        "trust",
        help="trust a workspace's own definitions (MCP servers, hooks, skills), or --revoke",
        description="Show what the workspace defines to run — MCP servers (.forge/mcp.yaml), "
        "hooks (.forge/hooks.json, .claude/settings.json) and skills' allowed-tools "
        "(.claude/skills, .agents/skills) — and trust it as it is now (a new or changed "
        "definition asks again), or forget the decision with --revoke.",
    )
    trust.add_argument("path", nargs="?", default=None, help="the workspace (default: -C or .)")
    trust_action = trust.add_mutually_exclusive_group()
    trust_action.add_argument(
        "--revoke",
        action="store_true",
        help="forget the decision: the workspace's servers, hooks and skills' tools wait for "
        "the next answer",
    )
    trust_action.add_argument(
        "--show", action="store_true", help="only show the definitions and the decision"
    )
    sandbox = sub.add_parser(
        "sandbox",
        help="what confines the model's commands here (--check)",
        description="Say whether the model's commands run confined, with which mechanism, "
        "and why not (docs/adr/0053); --check also runs one confined command.",
    )
    sandbox.add_argument("path", nargs="?", default=None, help="the workspace (default: -C or .)")
    sandbox.add_argument("--check", action="store_true", help="run a confined command too")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `forge` console script."""
    args = _build_parser().parse_args(argv)
    if args.command == "config":
        from forge.config.commands import run_config_command

        return run_config_command(args.action)
    ephemeral = args.command == "run" and args.ephemeral  # writes nothing: no dirs needed
    if args.command in (None, "run", "acp") and not ephemeral:
        from forge.config.paths import unusable_directories

        # Sessions and logs need these; one clear line beats a traceback mid-run.
        for problem in (unusable := unusable_directories()):
            print(f"forge: {problem}", file=sys.stderr)
        if unusable:
            return 2
    if args.command == "run":
        from forge.headless.run import run_headless

        return run_headless(args)
    if args.command == "acp":
        from forge.acp.server import run_acp

        return run_acp(args)
    if args.command == "trust":
        from forge.agent.trust.command import run_trust_command

        return run_trust_command(args.path or args.workspace, revoke=args.revoke, show=args.show)
    if args.command == "sandbox":
        from forge.agent.sandbox.report import run_sandbox_check

        return run_sandbox_check(args.path or args.workspace)
    if args.command == "export":
        from forge.tui.session_commands import run_export_command

        return run_export_command(args.workspace, args.id, args.format, args.output)
    if args.command == "sessions":
        from forge.agent.history.session_listing import print_search, print_sessions, rename_session

        if args.rename:
            return rename_session(args.workspace, *args.rename)
        if args.search is not None:
            return print_search(
                args.workspace,
                args.search,
                include_tools=args.all,
                all_workspaces=args.all_workspaces,
            )
        return print_sessions(args.workspace)
    from forge.tui.app import run_tui

    return run_tui(args)


if __name__ == "__main__":
    sys.exit(main())
