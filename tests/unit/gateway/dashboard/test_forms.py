"""The dashboard's forms: text to the admin API's body, and the API's reasons beside their fields."""

from __future__ import annotations

from services.gateway.dashboard.forms import FORM_LEVEL, FORMS, fill, place, pydantic_errors


def test_fields_become_the_api_body_and_empty_ones_are_left_out() -> None:
    filled = fill(FORMS["collection"], {"name": " core ", "members": "a, b,,c ", "reply": "", "_form": "x"})
    assert filled.ok
    assert filled.body == {"name": "core", "members": ["a", "b", "c"]}


def test_a_checkbox_with_its_hidden_default_reads_the_last_value() -> None:
    body = fill(FORMS["model"], {"tools": ["no", "yes"], "vision": "no"}).body
    assert body == {"tools": True, "vision": False}


def test_blank_clears_only_where_the_form_says_so() -> None:
    body = fill(FORMS["collection"], {"name": "core", "merger": "", "shadows": " ", "members": ""}).body
    assert body == {"name": "core", "merger": "", "shadows": []}


def test_text_that_cannot_be_the_value_is_refused_beside_its_field() -> None:
    filled = fill(FORMS["limits"], {"connection": "fake", "rpm": "ten", "tpd": "5000"})
    assert not filled.ok
    assert filled.errors == {"rpm": ["must be a whole number"]}
    assert fill(FORMS["verdict"], {"useful": "perhaps"}).errors == {"useful": ["must be yes or no"]}


def test_the_api_reasons_go_beside_the_field_they_name() -> None:
    errors = ["member 'zzz' is not a model on the bench", '"merger" must be a model alias',
              "collection name must be 2-32 characters", "the configuration kept changing"]
    assert place(FORMS["collection"], errors) == {
        "members": [errors[0]], "merger": [errors[1]], "name": [errors[2]], FORM_LEVEL: [errors[3]],
    }


def test_the_longest_name_wins_so_a_prefix_is_not_taken_for_it() -> None:
    placed = place(FORMS["settings"], ['"max_explorers" must be 0..2'])
    assert placed == {"max_explorers": ['"max_explorers" must be 0..2']}


def test_schema_refusals_name_their_field_and_never_echo_the_value() -> None:
    errors = [{"loc": ("rpm",), "msg": "Input should be a valid integer", "type": "int_type",
               "input": "s3cr3t"},
              {"loc": ("extra",), "msg": "Extra inputs are not permitted", "type": "extra_forbidden"}]
    placed = pydantic_errors(errors)
    assert placed == {"rpm": ["Input should be a valid integer"], FORM_LEVEL: ["unknown field extra"]}
    assert "s3cr3t" not in str(placed)
