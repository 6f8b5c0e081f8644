"""Modal screens: tool approval, questions from the agent, and help."""
