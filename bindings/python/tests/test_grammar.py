"""Grammars from Python (mint/grammar.py over mint_text.h's "Grammars"): Model.generate with a
GBNF grammar gives text the grammar matches and mint-run --grammar's text for the same settings;
a Grammar steps token by token; a grammar that does not parse raises with its one line."""

import re

import pytest

import mint
from conftest import run_tool

WORDS = 'root ::= (" " [a-z]+){4,6} "."'


def test_generate_follows_the_grammar(stories):
    for seed in range(1, 6):
        text = stories.generate("Once upon a time", max_tokens=60, seed=seed, grammar=WORDS)
        assert re.fullmatch(r"( [a-z]+){4,6}\.", text), text


def test_generate_is_mint_runs_text(stories, stories_path, bin_dir):
    r = run_tool(bin_dir, "mint-run", "-m", stories_path, "-p", "Once upon a time", "-n", 60,
                 "-t", 1, "--temp", 0.8, "-s", 7, "--grammar", WORDS)  # fmt: skip
    text = stories.generate("Once upon a time", max_tokens=60, temperature=0.8, seed=7, grammar=WORDS)
    assert r.stdout.decode("utf-8") == "Once upon a time" + text + "\n"


def test_a_grammar_object_is_reset_and_reused(stories):
    g = stories.grammar('root ::= " the" (" " [a-z]+)+ "!"')
    a = stories.generate("Once upon a time", max_tokens=20, temperature=0, grammar=g)
    b = stories.generate("Once upon a time", max_tokens=20, temperature=0, grammar=g)
    assert a == b and a.startswith(" the")
    streamed = "".join(t.piece for t in stories.generate(
        "Once upon a time", max_tokens=20, temperature=0, grammar=g, stream=True))  # fmt: skip
    assert streamed == a


def test_grammar_steps_token_by_token(stories):
    g = mint.Grammar(stories, 'root ::= " Once" " upon"')
    once, upon = stories.tokenize(" Once", add_bos=False)[-1], stories.tokenize(" upon", add_bos=False)[-1]
    assert g.allows(once) and not g.allows(upon) and not g.can_end
    with pytest.raises(mint.MintArgumentError, match="is not allowed here"):
        g.accept(upon)
    g.accept(once)
    g.accept(upon)
    assert g.can_end and g.allows(stories.eos)
    g.reset()
    assert not g.can_end
    g.close()
    with pytest.raises(mint.ClosedError):
        g.allows(once)


def test_a_bad_grammar_raises_its_one_line(stories):
    with pytest.raises(mint.MintFormatError) as e:
        stories.generate("Once", grammar="root ::= x")
    assert str(e.value) == "grammar: 1:10: undefined rule 'x', near 'x'"
    with pytest.raises(mint.MintArgumentError, match="trigger pattern 0 is not a valid regex"):
        stories.grammar(WORDS, trigger_patterns=["(unclosed"])
    with pytest.raises(mint.MintTypeError):
        stories.generate("Once", grammar=42)


def test_a_lazy_grammar_waits_for_its_trigger(stories):
    free = stories.generate("Once upon a time", max_tokens=30, temperature=0)
    g = stories.grammar('root ::= " Lily" (" " [a-z]+){2} "!"', trigger_words=[" Lily"])
    text = stories.generate("Once upon a time", max_tokens=30, temperature=0, grammar=g)
    at = free.index(" Lily")
    assert text[:at] == free[:at]
    assert re.fullmatch(r" Lily( [a-z]+){2}!", text[at:]), text


def test_sample_info_counts_the_grammars_tokens(stories):
    s = stories.sampler(temperature=0.8, seed=1)
    g = stories.grammar("root ::= [0-9]+")
    s.set_grammar(g)
    info = s.sample_info([0.0] * stories.n_vocab)
    assert 0 < info.n_grammar < stories.n_vocab
    s.set_grammar(None)
    assert s.sample_info([0.0] * stories.n_vocab).n_grammar == stories.n_vocab


def test_closing_the_model_closes_its_grammars(stories_path):
    m = mint.Model(stories_path)
    g = m.grammar(WORDS)
    m.close()
    with pytest.raises(mint.ClosedError):
        g.reset()


PERSON = {
    "type": "object",
    "properties": {"name": {"type": "string", "maxLength": 8}, "age": {"type": "integer"}},
    "required": ["name", "age"],
    "additionalProperties": False,
}


def test_json_schema_answers_parse_and_fit(stories):
    import json

    for seed in range(8):
        text = stories.generate("Once upon a time", max_tokens=120, seed=seed, json_schema=PERSON)
        value = json.loads(text)  # complete: the grammar ends the text
        assert set(value) == {"name", "age"} and isinstance(value["age"], int)
        assert isinstance(value["name"], str) and len(value["name"]) <= 8


def test_json_schema_to_grammar_is_llama_cpps_text_and_refuses_bad_schemas():
    g = mint.json_schema_to_grammar({"type": "object"})
    assert g.startswith("root ::= object") or "root ::=" in g
    with pytest.raises(mint.MintError, match="json schema"):
        mint.json_schema_to_grammar({"$ref": "#/nowhere"})
