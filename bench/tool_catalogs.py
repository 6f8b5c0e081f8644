"""Five MCP servers' tool lists for the `tool_search` section: 120 tools named as the real
servers name them, with schemas of the real servers' size.

Names are those of the real servers: the GitHub server (`github/github-mcp-server`, issues,
pull requests, repositories, actions, code scanning: 46 of its tools), Microsoft's Playwright
server (21 `browser_*` tools), the reference filesystem server
(`@modelcontextprotocol/server-filesystem`, 14 tools), a Slack server (11 tools) and Sentry's
(28 tools). The parameters are the ones each real tool takes where known, else the usual ones
of its family; descriptions are written for this benchmark. The size per tool is set to what
measurements of the real servers report (o200k tokens of name, description and schema):
GitHub ~35 tools for ~26,000 tokens in Claude Code's /context (about 740 a tool) and 69 % of
22,945 tokens for the 26-tool reference GitHub server (about 610); Playwright 21 tools for
~13,600 (about 650); Slack 263 tokens a tool on average over 142 tools; filesystem and Sentry
are smaller. This benchmark takes the low side of each (`TOKENS_PER_TOOL`): about 42,000
tokens for the 120, so deferring is not flattered.
"""

from __future__ import annotations

from typing import Any

SERVERS: dict[str, tuple[str, tuple[str, ...]]] = {
    "github": (
        "GitHub: repositories, issues, pull requests, actions and code scanning",
        [
            "add_issue_comment",
            "create_branch",
            "create_issue",
            "create_or_update_file",
            "create_pull_request",
            "create_repository",
            "delete_file",
            "fork_repository",
            "get_commit",
            "get_file_contents",
            "get_issue",
            "get_issue_comments",
            "get_me",
            "get_pull_request",
            "get_pull_request_comments",
            "get_pull_request_diff",
            "get_pull_request_files",
            "get_pull_request_reviews",
            "get_pull_request_status",
            "get_tag",
            "list_branches",
            "list_commits",
            "list_issues",
            "list_pull_requests",
            "list_tags",
            "merge_pull_request",
            "push_files",
            "search_code",
            "search_issues",
            "search_repositories",
            "search_users",
            "update_issue",
            "update_pull_request",
            "update_pull_request_branch",
            "create_pending_pull_request_review",
            "submit_pending_pull_request_review",
            "request_copilot_review",
            "list_workflows",
            "list_workflow_runs",
            "get_workflow_run",
            "get_job_logs",
            "rerun_workflow_run",
            "list_code_scanning_alerts",
            "get_code_scanning_alert",
            "list_notifications",
            "list_secret_scanning_alerts",
        ],
    ),
    "playwright": (
        "Playwright: drive a web browser (navigate, click, type, screenshots)",
        [
            "browser_close",
            "browser_resize",
            "browser_console_messages",
            "browser_handle_dialog",
            "browser_evaluate",
            "browser_file_upload",
            "browser_fill_form",
            "browser_install",
            "browser_press_key",
            "browser_type",
            "browser_navigate",
            "browser_navigate_back",
            "browser_network_requests",
            "browser_take_screenshot",
            "browser_snapshot",
            "browser_click",
            "browser_drag",
            "browser_hover",
            "browser_select_option",
            "browser_tabs",
            "browser_wait_for",
        ],
    ),
    "filesystem": (
        "Filesystem: read, write and search files under the allowed directories",
        [
            "read_text_file",
            "read_media_file",
            "read_multiple_files",
            "write_file",
            "edit_file",
            "create_directory",
            "list_directory",
            "list_directory_with_sizes",
            "directory_tree",
            "move_file",
            "search_files",
            "get_file_info",
            "list_allowed_directories",
            "read_file",
        ],
    ),
    "slack": (
        "Slack: channels, messages, threads, reactions and users of a workspace",
        [
            "slack_list_channels",
            "slack_post_message",
            "slack_reply_to_thread",
            "slack_add_reaction",
            "slack_get_channel_history",
            "slack_get_thread_replies",
            "slack_get_users",
            "slack_get_user_profile",
            "slack_search_messages",
            "slack_update_message",
            "slack_delete_message",
        ],
    ),
    "sentry": (
        "Sentry: errors, issues, events, traces, releases and projects",
        [
            "whoami",
            "find_organizations",
            "find_teams",
            "find_projects",
            "find_releases",
            "get_issue_details",
            "get_trace_details",
            "get_event_attachment",
            "update_issue",
            "search_events",
            "create_team",
            "create_project",
            "update_project",
            "create_dsn",
            "find_dsns",
            "analyze_issue_with_seer",
            "search_docs",
            "get_doc",
            "search_issues",
            "find_tags",
            "get_release_details",
            "list_issue_events",
            "get_project_details",
            "list_alert_rules",
            "get_alert_rule",
            "resolve_issue",
            "assign_issue",
            "list_replays",
        ],
    ),
}
TOKENS_PER_TOOL = {"github": 520, "playwright": 300, "filesystem": 180, "slack": 260, "sentry": 250}
"""The definition size aimed at per tool (tokens), on the low side of what is measured."""

DESCRIPTIONS = {
    "create_issue": "Create a new issue in a GitHub repository.",
    "list_commits": (
        "Get the list of commits of a branch in a GitHub repository, newest first, with their "
        "author, date and message."
    ),
    "browser_navigate": "Navigate the browser to a URL and wait for the page to load.",
    "browser_take_screenshot": (
        "Take a screenshot of the current page (or of one element) and save it as PNG or JPEG."
    ),
    "get_issue_details": (
        "Retrieve the details of a Sentry issue: its error, the latest event's stack trace, "
        "tags and how often it happens."
    ),
    "slack_post_message": "Post a new message to a Slack channel.",
}
"""The six tools the session uses, described as their servers describe them."""

USED = (
    ("sentry", "get_issue_details", {"issueId": "FORGE-1A2B"}),
    ("github", "list_commits", {"owner": "acme", "repo": "shop", "sha": "main"}),
    ("playwright", "browser_navigate", {"url": "http://localhost:8000/checkout"}),
    ("playwright", "browser_take_screenshot", {"filename": "checkout.png"}),
    ("github", "create_issue", {"owner": "acme", "repo": "shop", "title": "Checkout 500"}),
    ("slack", "slack_post_message", {"channel_id": "C0123", "text": "Filed acme/shop#42"}),
)
"""The six tools, in the order the session uses them, with the arguments it calls them with."""

_FAMILY_PARAMETERS = {
    "github": ("owner", "repo"),
    "playwright": (),
    "filesystem": ("path",),
    "slack": ("channel_id",),
    "sentry": ("organizationSlug", "regionUrl"),
}
_VERB_PARAMETERS = {
    "list": ("page", "perPage", "sort", "direction"),
    "search": ("query", "page", "perPage", "sort"),
    "get": ("id",),
    "find": ("query", "limit"),
    "create": ("title", "body", "labels"),
    "update": ("id", "title", "body", "state"),
}
_OWN_PARAMETERS = {
    "create_issue": ("title", "body", "assignees", "labels", "milestone", "type"),
    "list_commits": ("sha", "author", "page", "perPage"),
    "browser_navigate": ("url",),
    "browser_take_screenshot": ("type", "filename", "element", "ref", "fullPage"),
    "get_issue_details": ("issueId", "issueUrl", "eventId"),
    "slack_post_message": ("channel_id", "text"),
}


def _words(name: str) -> str:
    return name.removeprefix("browser_").removeprefix("slack_").replace("_", " ")


def _parameters(server: str, tool: str) -> list[str]:
    own = _OWN_PARAMETERS.get(tool)
    verb = tool.removeprefix("browser_").removeprefix("slack_").split("_")[0]
    chosen = list(_FAMILY_PARAMETERS[server]) + list(own or _VERB_PARAMETERS.get(verb, ("id",)))
    return list(dict.fromkeys(chosen))


def _tool(server: str, tool: str, counter: Any) -> dict[str, Any]:
    """One tool whose definition is about `TOKENS_PER_TOOL[server]` tokens: the parameters'
    descriptions are written out until it is (real schemas spend their size there)."""
    description = DESCRIPTIONS.get(tool) or f"{_words(tool).capitalize()} ({server})."
    names = _parameters(server, tool)
    properties: dict[str, Any] = {
        name: {"type": "integer" if name in ("page", "perPage", "limit") else "string"}
        for name in names
    }
    passed = [list(arguments) for _, used, arguments in USED if used == tool]
    required = passed[0] if passed else names[:1]  # what the session's call passes
    schema = {"type": "object", "properties": properties, "required": required}
    target = TOKENS_PER_TOOL[server]
    sentence = 0
    while counter(tool, description, schema) < target:
        name = names[sentence % len(names)]
        prose = properties[name].get("description", f"The {name} to use for {_words(tool)}.")
        properties[name]["description"] = prose + _FILLER[sentence % len(_FILLER)]
        sentence += 1
    return {"name": tool, "description": description, "inputSchema": schema}


_FILLER = (
    " Leave it out to use the default of the server.",
    " Values are matched case-insensitively; unknown values are an error.",
    " The server checks this against the permissions of the token it runs with.",
    " When several are accepted, separate them with commas.",
)


def catalogs(counter: Any) -> dict[str, dict[str, Any]]:
    """Each server's catalog (`tests/mcp/servers/catalog_server.py`'s input); `counter(name,
    description, schema)` gives one definition's tokens."""
    return {
        server: {
            "name": server,
            "instructions": about,
            "tools": [_tool(server, tool, counter) for tool in tools],
        }
        for server, (about, tools) in SERVERS.items()
    }
