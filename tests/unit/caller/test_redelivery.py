from hypothesis import given
from hypothesis import strategies as st

from services.caller.redelivery import CLOCK_SLACK_S, may_be_answered

NOW = 1_800_000_000.0


def test_a_call_stored_while_this_connection_lives_is_sent_without_a_look() -> None:
    assert not may_be_answered(1, stored_at=NOW + CLOCK_SLACK_S + 0.1, connected_since=NOW)


def test_a_call_stored_before_the_connection_began_is_looked_at() -> None:
    """A restarted server hands out again, as first deliveries, calls it had handed out before it died."""
    assert may_be_answered(1, stored_at=NOW - 5, connected_since=NOW)


def test_a_call_stored_just_after_the_connection_began_is_looked_at_too() -> None:
    """The server's clock may run behind the caller's."""
    assert may_be_answered(1, stored_at=NOW + CLOCK_SLACK_S / 2, connected_since=NOW)


@given(delivered=st.integers(min_value=2, max_value=10), stored_at=st.floats(NOW - 1e6, NOW + 1e6))
def test_a_second_delivery_is_always_looked_at(delivered: int, stored_at: float) -> None:
    assert may_be_answered(delivered, stored_at=stored_at, connected_since=NOW)
