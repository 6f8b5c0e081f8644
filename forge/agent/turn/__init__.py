"""The turn machinery: the loop, one tool call, the turn's event road and its state."""
