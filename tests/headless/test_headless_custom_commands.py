"""`forge run "/name args"` as a real subprocess expands a custom command from real files."""

from __future__ import annotations

import os
from pathlib import Path

from tests.headless.test_headless import forge_run, jsonl
from tests.support.openai_server import OpenAIServer, Text


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_forge_run_expands_a_custom_command_on_its_model(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    project = workspace / ".forge" / "commands"
    write(
        project / "git" / "review.md",
        "---\ndescription: Review\nmodel: review-model\n---\nReview $1 then $2 ($ARGUMENTS)\n",
    )
    broken = write(project / "broken.md", "---\nmodel: [x\n---\nbody\n")
    llm_server.enqueue(Text("Reviewed."))
    result = forge_run(llm_server, workspace, "--output", "jsonl", '/git:review "a b" c')
    assert result.returncode == 0, result.stderr
    request = llm_server.requests[0]
    assert request.messages[-1]["content"] == 'Review a b then c ("a b" c)'
    assert request.model == "review-model"
    assert jsonl(result)[0]["model"] == "review-model"
    assert f"custom command not loaded: {broken}: malformed front matter" in result.stderr


def test_forge_run_uses_user_commands_and_leaves_other_slashes_alone(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    user = Path(os.environ["XDG_CONFIG_HOME"]) / "forge" / "commands"
    write(user / "explain.md", "Explain $ARGUMENTS")
    llm_server.enqueue(Text("Done."), Text("A path."))
    first = forge_run(llm_server, workspace, "/explain the parser")
    second = forge_run(llm_server, workspace, "/etc/hosts: what is it?")
    assert (first.returncode, second.returncode) == (0, 0), first.stderr + second.stderr
    sent = [request.messages[-1]["content"] for request in llm_server.requests]
    assert sent == ["Explain the parser", "/etc/hosts: what is it?"]


def test_forge_run_runs_a_skill_as_name_args_and_lists_skills(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    skills = workspace / ".agents" / "skills"
    write(
        skills / "review" / "SKILL.md",
        "---\nname: review\ndescription: Review a file.\n---\nReview $1 in ${SKILL_DIR}\n",
    )
    bad = write(skills / "Bad" / "SKILL.md", "---\nname: Bad\ndescription: x\n---\nbody\n")
    write(workspace / ".forge" / "commands" / "same.md", "The custom command")
    write(skills / "same" / "SKILL.md", "---\nname: same\ndescription: Shadowed.\n---\nThe skill\n")
    llm_server.enqueue(Text("Reviewed."), Text("Custom."))
    first = forge_run(llm_server, workspace, "/review src/a.py")
    second = forge_run(llm_server, workspace, "/same")
    assert (first.returncode, second.returncode) == (0, 0), first.stderr + second.stderr
    request = llm_server.requests[0]
    assert f"Review src/a.py in {skills / 'review'}" in request.messages[-1]["content"]
    assert (
        "- review: Review a file. (.agents/skills/review/SKILL.md)"
        in request.messages[0]["content"]
    )
    assert f"skills: {bad}: `name` 'Bad' must be" in first.stderr
    assert llm_server.requests[1].messages[-1]["content"] == "The custom command"
    # The clash is said, as the TUI says it (builtin > custom > skill; docs/adr/0046).
    assert "skills: /same is also a custom command; the custom command wins" in second.stderr
    assert "/same is also a custom command" not in first.stderr


def test_forge_run_sessions_are_titled_with_the_command_as_typed(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    """Issue 35: `forge sessions` (and `/sessions`) title a run of `/name args` with what was
    typed, not with the skill's or command's text (docs/adr/0048)."""
    from forge.agent.history.session_file import SessionStore

    write(
        workspace / ".agents" / "skills" / "greet" / "SKILL.md",
        "---\nname: greet\ndescription: Greets.\n---\nSay hello to $ARGUMENTS warmly\n",
    )
    write(workspace / ".forge" / "commands" / "explain.md", "Explain $ARGUMENTS in detail")
    llm_server.enqueue(Text("Hello."), Text("Explained."))
    first = forge_run(llm_server, workspace, "/greet Alice")
    second = forge_run(llm_server, workspace, "/explain the parser")
    assert (first.returncode, second.returncode) == (0, 0), first.stderr + second.stderr
    titles = sorted(info.title for info in SessionStore().list_sessions(workspace))
    assert titles == ["/explain the parser", "/greet Alice"]
    sent = [request.messages[-1]["content"] for request in llm_server.requests]
    assert "Say hello to Alice warmly" in sent[0] and sent[1] == "Explain the parser in detail"
