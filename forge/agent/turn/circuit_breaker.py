"""The circuit breaker: ends a turn when the model repeats the same failing tool call."""

from __future__ import annotations

DEFAULT_IDENTICAL_ERROR_LIMIT = 5


class CircuitBreaker:
    """Counts identical consecutive tool errors (same tool, same error text).

    Any success, or a different error, starts the count again. `record` returns True when the
    count reaches `limit`: the model is stuck, and more calls would only spend tokens.
    """

    def __init__(self, limit: int = DEFAULT_IDENTICAL_ERROR_LIMIT) -> None:
        if limit < 1:
            raise ValueError("the limit must be at least 1")
        self.limit = limit
        self._last_error: tuple[str, str] | None = None
        self._count = 0

    @property
    def count(self) -> int:
        """Identical consecutive errors seen so far."""
        return self._count

    def record(self, tool_name: str, content: str, *, is_error: bool) -> bool:
        """Note one tool result; True when the breaker trips."""
        if not is_error:
            self._last_error = None
            self._count = 0
            return False
        error = (tool_name, content)
        self._count = self._count + 1 if error == self._last_error else 1
        self._last_error = error
        return self._count >= self.limit
