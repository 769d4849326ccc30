"""``scrub`` on any text: it never fails, a second pass changes nothing, and a value
written under a secret name (``name=value``, ``"name": "value"``) never survives it."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from agents.records.redaction import scrub

SECRET_NAMES = st.sampled_from(
    ["password", "api_key", "API-KEY", "token", "client_secret", "db_password", "Authorization"]
)
# values a secret takes: no separator that ends one (a space, "&", ";", ",", a quote)
VALUES = st.text(
    alphabet=st.characters(
        blacklist_categories=["Cs", "Z", "C"], blacklist_characters="&;,\"'<>\\"
    ),
    min_size=1,
    max_size=30,
).filter(lambda value: not value.startswith("[redacted]"))
PROSE = st.text(max_size=60)


@given(PROSE)
def test_scrub_is_total_and_settled(text):
    once = scrub(text)
    assert scrub(once) == once


@given(PROSE, SECRET_NAMES, VALUES, st.sampled_from(["{}={}", '"{}": "{}"', "'{}': '{}'"]), PROSE)
def test_a_value_under_a_secret_name_never_survives(before, name, value, form, after):
    text = f"{before} {form.format(name, value)} {after}"
    scrubbed = scrub(text)
    assert form.format(name, "[redacted]") in scrubbed
    assert scrub(scrubbed) == scrubbed
