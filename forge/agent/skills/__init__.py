"""Skills: agentskills.io `SKILL.md` folders, listed in the system prompt and loaded on demand
(docs/adr/0046-skills.md)."""
