"""`forge acp` initializes, opens a session and runs a turn with streamed chunks; it
advertises Forge's and the custom commands and runs them as prompts starting with "/"."""

from __future__ import annotations

from pathlib import Path

from forge.acp.relay import QUESTION_SHOWN
from tests.acp.conftest import RecordingClient, forge_acp, forge_environment, prompt_of
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls


async def test_initialize_states_forges_capabilities_and_needs_no_authentication(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    client = RecordingClient()
    environment = forge_environment(llm_server)
    async with forge_acp(client, environment, workspace=workspace, initialize=False) as (
        connection,
        _,
    ):
        answer = await connection.initialize(protocol_version=1)
    assert answer.protocol_version == 1
    capabilities = answer.agent_capabilities
    assert capabilities is not None and capabilities.load_session is True
    assert capabilities.prompt_capabilities is not None
    assert capabilities.prompt_capabilities.embedded_context is True
    # The configured model (gpt-4o-mini) takes images (docs/adr/0055, part 2).
    assert capabilities.prompt_capabilities.image is True
    assert capabilities.mcp_capabilities is not None and capabilities.mcp_capabilities.http
    assert answer.auth_methods == []
    assert answer.agent_info is not None and answer.agent_info.name == "forge"


async def test_a_prompt_streams_thought_and_message_chunks_and_ends_the_turn(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(
        Text("The answer is forty-two.", reasoning="Thinking it over.", chunk_size=5)
    )
    client = RecordingClient()
    async with forge_acp(client, forge_environment(llm_server), workspace=workspace) as (
        connection,
        _,
    ):
        session = await connection.new_session(cwd=str(workspace), mcp_servers=[])
        answer = await connection.prompt(
            session_id=session.session_id, prompt=prompt_of("What is the answer?")
        )
    assert answer.stop_reason == "end_turn"
    assert len(client.of_kind("agent_message_chunk")) > 1  # streamed, not one block
    assert client.text() == "The answer is forty-two."
    assert client.text("agent_thought_chunk") == "Thinking it over."
    assert llm_server.requests[0].messages[-1]["content"] == "What is the answer?"
    # The context's fill and the cost after the request (the meter moves during a turn) and
    # again after the turn.
    first, usage = client.of_kind("usage_update")
    assert first.cost is not None and first.cost.amount == usage.cost.amount  # type: ignore[union-attr]
    assert 0 < usage.used < usage.size
    assert usage.cost is not None and usage.cost.currency == "USD"
    # The session's modes and model are offered at once.
    assert session.modes is not None and session.modes.current_mode_id == "ask"
    assert [mode.id for mode in session.modes.available_modes] == [
        "read-only",
        "ask",
        "accept-edits",
        "auto",
    ]
    # Names for people, not the ids again.
    assert [mode.name for mode in session.modes.available_modes] == [
        "Read-only",
        "Ask",
        "Accept edits",
        "Auto",
    ]
    assert session.config_options is not None
    model = (
        session.config_options[0].root
        if hasattr(session.config_options[0], "root")
        else (session.config_options[0])
    )
    assert model.id == "model" and model.category == "model"


async def test_commands_are_advertised_and_run_as_slash_prompts(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    commands = workspace / ".forge" / "commands"
    commands.mkdir(parents=True)
    (commands / "review.md").write_text(
        "---\ndescription: Review a file\nmodel: review-model\n---\nReview $ARGUMENTS carefully\n"
    )
    llm_server.enqueue(Text("Reviewed."))
    client = RecordingClient()
    async with forge_acp(client, forge_environment(llm_server), workspace=workspace) as (
        connection,
        _,
    ):
        session = await connection.new_session(cwd=str(workspace), mcp_servers=[])
        sid = session.session_id
        help_answer = await connection.prompt(session_id=sid, prompt=prompt_of("/help"))
        help_text = client.text()
        advertised = client.of_kind("available_commands_update")
        client.clear()
        await connection.prompt(session_id=sid, prompt=prompt_of("/mode accept-edits"))
        mode_updates = client.of_kind("current_mode_update")
        client.clear()
        await connection.prompt(session_id=sid, prompt=prompt_of("/nonsense"))
        unknown = client.text()
        client.clear()
        reviewed = await connection.prompt(session_id=sid, prompt=prompt_of("/review app.py"))

    assert advertised, "no available_commands_update"
    names = {command.name for command in advertised[0].available_commands}
    assert {"compact", "context", "cost", "model", "mode", "undo", "help", "review"} <= names
    review = next(c for c in advertised[0].available_commands if c.name == "review")
    assert review.description == "Review a file"
    assert help_answer.stop_reason == "end_turn" and "/review — Review a file" in help_text
    assert [update.current_mode_id for update in mode_updates] == ["accept-edits"]
    assert "Unknown command /nonsense" in unknown
    # Only the custom command reached the model, expanded, on its own model.
    assert reviewed.stop_reason == "end_turn"
    assert len(llm_server.requests) == 1
    assert llm_server.requests[0].messages[-1]["content"] == "Review app.py carefully"
    assert llm_server.requests[0].model == "review-model"
    assert client.text() == "Reviewed."


async def test_a_question_is_shown_and_the_model_is_told_to_end_the_turn(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(
        ToolCalls(
            [Call("ask_question", {"question": "Which file?", "suggestions": ["a.py", "b.py"]})]
        ),
        ToolCalls([Call("converse", {"message": "Tell me which file and I will go on."})]),
        Text("Working on b.py."),
    )
    client = RecordingClient()
    async with forge_acp(client, forge_environment(llm_server), workspace=workspace) as (
        connection,
        _,
    ):
        session = await connection.new_session(cwd=str(workspace), mcp_servers=[])
        sid = session.session_id
        first = await connection.prompt(session_id=sid, prompt=prompt_of("fix it"))
        shown = client.text()
        second = await connection.prompt(session_id=sid, prompt=prompt_of("b.py"))
    assert first.stop_reason == "end_turn" and second.stop_reason == "end_turn"
    assert "Which file?" in shown and "- a.py" in shown and "- b.py" in shown
    assert "Tell me which file" in shown
    answer = [m for m in llm_server.requests[1].messages if m["role"] == "tool"][-1]
    assert answer["content"] == QUESTION_SHOWN
    # An editor is interactive: the system prompt does not say nobody is watching.
    assert "No user is watching" not in llm_server.requests[0].messages[0]["content"]


async def test_a_command_file_added_while_running_is_found_and_advertised(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(Text("Late command ran."))
    client = RecordingClient()
    async with forge_acp(client, forge_environment(llm_server), workspace=workspace) as (
        connection,
        _,
    ):
        session = await connection.new_session(cwd=str(workspace), mcp_servers=[])
        commands = workspace / ".forge" / "commands"
        commands.mkdir(parents=True)
        (commands / "late.md").write_text("Do the late thing\n")
        answer = await connection.prompt(session_id=session.session_id, prompt=prompt_of("/late"))
    assert answer.stop_reason == "end_turn"
    assert llm_server.requests[0].messages[-1]["content"] == "Do the late thing"
    latest = client.of_kind("available_commands_update")[-1]
    assert "late" in {command.name for command in latest.available_commands}


async def test_undo_context_and_cost_commands_answer_without_a_model_call(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(
        ToolCalls([Call("write_file", {"path": "made.txt", "content": "new\n"})]),
        Text("Made it."),
    )
    client = RecordingClient(answers=["allow_once"])
    async with forge_acp(client, forge_environment(llm_server), workspace=workspace) as (
        connection,
        _,
    ):
        session = await connection.new_session(cwd=str(workspace), mcp_servers=[])
        sid = session.session_id
        await connection.prompt(session_id=sid, prompt=prompt_of("make a file"))
        made = (workspace / "made.txt").exists()
        replies = {}
        for command in ("/context", "/cost", "/undo", "/undo"):
            client.clear()
            await connection.prompt(session_id=sid, prompt=prompt_of(command))
            replies.setdefault(command, []).append(client.text())
    assert made and not (workspace / "made.txt").exists()
    assert replies["/context"][0].startswith("Context: ")
    assert "agent gpt-4o-mini: 2 requests" in replies["/cost"][0]
    assert "made.txt" in replies["/undo"][0] and replies["/undo"][1].startswith("Nothing to undo")
    assert len(llm_server.requests) == 2  # the commands made no request


async def test_a_subagents_calls_show_labelled_with_its_name(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    (workspace / "notes.md").write_text("the plan is in here\n")
    llm_server.enqueue(
        ToolCalls([Call("task", {"agent": "explore", "prompt": "find the plan"})]),
        ToolCalls([Call("read_file", {"path": "notes.md"})]),  # the child's first request
        Text("The plan is in notes.md."),  # the child's report
        Text("Found it: notes.md."),
    )
    client = RecordingClient()
    async with forge_acp(client, forge_environment(llm_server), workspace=workspace) as (
        connection,
        _,
    ):
        session = await connection.new_session(cwd=str(workspace), mcp_servers=[])
        answer = await connection.prompt(
            session_id=session.session_id, prompt=prompt_of("where is the plan?")
        )
    assert answer.stop_reason == "end_turn"
    assert "[explore] read_file: notes.md" in client.text("agent_thought_chunk")
    assert client.text().endswith("Found it: notes.md.")
    final = llm_server.requests[-1].messages
    assert any("The plan is in notes.md." in str(m.get("content")) for m in final)


async def test_skills_are_advertised_and_run_as_slash_prompts(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    skill = workspace / ".forge" / "skills" / "release-notes"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: release-notes\ndescription: Write release notes from the git log\n---\n"
        "Read the log since the last tag and group the changes by area.\n"
    )
    llm_server.enqueue(Text("Notes written."))
    client = RecordingClient()
    async with forge_acp(client, forge_environment(llm_server), workspace=workspace) as (
        connection,
        _,
    ):
        session = await connection.new_session(cwd=str(workspace), mcp_servers=[])
        answer = await connection.prompt(
            session_id=session.session_id, prompt=prompt_of("/release-notes v2.1")
        )
    advertised = client.of_kind("available_commands_update")
    names = {command.name: command for command in advertised[0].available_commands}
    assert names["release-notes"].description == "Write release notes from the git log"
    assert answer.stop_reason == "end_turn"
    sent = llm_server.requests[0].messages[-1]["content"]
    assert "group the changes by area" in sent and "v2.1" in sent


def rendered_lines(markdown: str) -> list[str]:
    """The lines an editor shows for a message: editors render it as Markdown (Toad, Zed),
    where a single newline is a soft break, shown as a space, and a hard break a new line."""
    from markdown_it import MarkdownIt

    lines: list[str] = []
    for token in MarkdownIt("commonmark").parse(markdown):
        if token.type != "inline":
            continue
        shown = "".join(
            "\n"
            if child.type == "hardbreak"
            else " "
            if child.type == "softbreak"
            else child.content
            for child in token.children or []
        )
        lines += shown.split("\n")
    return lines


async def test_a_commands_answer_keeps_its_lines_when_rendered_as_markdown(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    """Found under Toad (scripts/toad_acp_check.py): /help and /cost ran their lines
    together into one paragraph."""
    llm_server.enqueue(Text("Hello."))
    client = RecordingClient()
    async with forge_acp(client, forge_environment(llm_server), workspace=workspace) as (
        connection,
        _,
    ):
        sid = (await connection.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        await connection.prompt(session_id=sid, prompt=prompt_of("Hi"))
        client.clear()
        await connection.prompt(session_id=sid, prompt=prompt_of("/help"))
        help_lines = rendered_lines(client.text())
        client.clear()
        await connection.prompt(session_id=sid, prompt=prompt_of("/cost"))
        cost_lines = rendered_lines(client.text())

    assert "/cost — Show the session's cost per model" in help_lines
    assert "/help — List Forge's commands" in help_lines
    assert len(help_lines) == 8, help_lines
    assert len(cost_lines) == 2 and cost_lines[1].startswith("Total: $"), cost_lines
