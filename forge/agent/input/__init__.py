"""What the user types besides a plain message: @-mentions, `!commands`, custom commands."""
