"""A definition holding any text reads back equal from every format it is written in
(docs/how-to/definitions.md): TOML refused DEL written raw, YAML folded NEL into a space,
and a Markdown body, read stripped, lost the white space around a system prompt."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from agents.definitions import AgentDefinition
from agents.records.redaction import is_secret_key, redact

# A URL's secrets in a text and values under secret keys are written redacted
# (tests/test_secrets.py): no round trip.
texts = st.text().filter(lambda text: redact(text) == text)
keys = st.text(min_size=1, max_size=8).filter(lambda key: not is_secret_key(key))
options = st.dictionaries(keys, texts | st.lists(texts, max_size=3), max_size=3)


# Each of these failed before: TOML refused DEL written raw (and a key's astral character
# written as a surrogate pair), YAML folded NEL into a space, and a Markdown body lost the
# white space around a prompt.
@example(name="n", description="x\x7fy", prompt="", model="", llm_options={})
@example(name="n", description="", prompt="", model="", llm_options={"\U00010000": ""})
@example(name="n", description="", prompt="", model="p\x85q", llm_options={})
@example(name="n", description="", prompt=" a\n", model="", llm_options={})
@given(
    name=st.text(min_size=1).filter(str.strip),
    description=texts,
    prompt=texts,
    model=texts,
    llm_options=options,
)
def test_any_text_reads_back_from_every_format(name, description, prompt, model, llm_options):
    definition = AgentDefinition(
        name=name,
        description=description,
        system_prompt=prompt,
        model=model,
        llm_options=llm_options,
    )
    for kind in ("toml", "yaml", "markdown"):
        assert AgentDefinition.from_text(definition.to_text(kind), kind) == definition, kind
