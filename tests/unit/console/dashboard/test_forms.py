"""The dashboard's forms: text to the admin API's body, and the API's reasons beside their fields."""

from __future__ import annotations

from services.console.dashboard.forms import FORM_LEVEL, FORMS, fill, on_fields, place, pydantic_errors


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


def test_several_served_ids_are_one_onboarding_form() -> None:
    body = fill(FORMS["onboard"], {"served": "a/b, c/d\n e:free", "endpoint": "fake", "mode": "quick"}).body
    assert body == {"served": ["a/b", "c/d", "e:free"], "endpoint": "fake", "mode": "quick"}


def test_the_probers_onboarding_refusals_go_beside_the_field_they_are_about() -> None:
    errors = ["fake does not list 'a/b'; near matches: a/bc",
              "'x' on 'nope': no endpoint 'nope' (endpoints: fake)",
              "'x' on 'fake': mode must be one of full, quick, quick-adhoc", "'c' on 'fake' is picked twice",
              "the queue is running; stop it and wait for the current model, then clear"]
    assert place(FORMS["onboard"], errors) == {
        "served": [errors[0], errors[3]], "endpoint": [errors[1]], "mode": [errors[2]],
        FORM_LEVEL: [errors[4]]}


def test_an_unlisted_id_is_not_taken_for_a_stale_page_but_a_removed_collection_is() -> None:
    assert not FORMS["onboard"].stale_when_missing and not FORMS["discover-add"].stale_when_missing
    assert FORMS["collection-remove"].stale_when_missing


def test_a_price_is_a_number_and_a_blank_capability_is_left_as_it_is() -> None:
    filled = fill(FORMS["facts"], {"alias": "a", "cost_input": "0.5", "cost_output": "1", "tools": "",
                                   "vision": "no", "context_window": "32000"})
    assert filled.body == {"alias": "a", "cost_input": 0.5, "cost_output": 1.0, "vision": False,
                           "context_window": 32000}
    assert fill(FORMS["facts"], {"cost_input": "-1"}).errors == {"cost_input": ["must be a number"]}


def test_a_schema_refusal_about_a_field_the_form_does_not_show_goes_above_it() -> None:
    placed = on_fields(FORMS["discover-add"], {"served": ["String should match pattern"], "mode": ["bad"]})
    assert placed == {FORM_LEVEL: ["served: String should match pattern"], "mode": ["bad"]}
