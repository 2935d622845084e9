"""The seater: who sits on a panel, decided from an in-memory fold of the event stream."""
