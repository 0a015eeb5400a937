"""The Python API against mint-run: the same prompt, model and settings give the same text,
token for token, in every decoding mode mint-run has (plain greedy and sampled, --json's
log-probabilities, --n-parallel, --beams, --lookup, --draft, -cnv)."""

import json
import re

import pytest

import mint
from conftest import run_tool

PROMPTS = ["Once upon a time", "Lily and Tom went to the park", ""]


def stdout(r):
    return r.stdout.decode("utf-8")


@pytest.mark.parametrize("prompt", PROMPTS)
def test_greedy_text_is_mint_runs(stories, stories_path, bin_dir, prompt):
    r = run_tool(bin_dir, "mint-run", "-m", stories_path, "-p", prompt, "-n", 64, "--temp", 0, "-t", 1)
    text = stories.generate(prompt, max_tokens=64, temperature=0)
    assert stdout(r) == prompt + text + "\n"


def test_sampled_text_is_mint_runs_for_the_same_seed(stories, stories_path, bin_dir):
    args = ["--temp", 0.9, "--top-k", 30, "--top-p", 0.9, "--min-p", 0.02, "--repeat-penalty",
            1.15, "--repeat-last-n", 32, "-s", 1234]  # fmt: skip
    r = run_tool(bin_dir, "mint-run", "-m", stories_path, "-p", "The cat", "-n", 80, "-t", 1, *args)
    text = stories.generate("The cat", max_tokens=80, temperature=0.9, top_k=30, top_p=0.9,
                            min_p=0.02, repeat_penalty=1.15, repeat_last_n=32, seed=1234)  # fmt: skip
    assert stdout(r) == "The cat" + text + "\n"
    # Another seed gives another text (the seed is used).
    other = stories.generate("The cat", max_tokens=80, temperature=0.9, seed=99)
    assert other != text


def test_streamed_tokens_carry_mint_runs_ids_and_logprobs(stories, stories_path, bin_dir):
    r = run_tool(bin_dir, "mint-run", "-m", stories_path, "-p", "Once upon a time", "-n", 40,
                 "--temp", 0, "-t", 1, "--json")  # fmt: skip
    want = [json.loads(line) for line in stdout(r).splitlines()]
    got = list(stories.generate("Once upon a time", max_tokens=40, temperature=0, stream=True))
    assert [t.id for t in got] == [w["id"] for w in want]
    assert [t.piece for t in got] == [w["piece"] for w in want]
    # mint-run prints %.9g of the same double: equal after the same rounding.
    assert [float(format(t.logprob, ".9g")) for t in got] == [w["logprob"] for w in want]


def test_streamed_pieces_join_to_the_text(stories):
    text = stories.generate("Once upon a time", max_tokens=48, temperature=0)
    toks = list(stories.generate("Once upon a time", max_tokens=48, temperature=0, stream=True))
    assert "".join(t.piece for t in toks) == text
    assert len(toks) == 48
    assert all(isinstance(t, mint.Token) and t.logprob <= 0 for t in toks)


def test_generation_on_a_synthetic_model_matches_mint_run(synth, synth_path, bin_dir):
    """Without shared data: token ids from --prompt-ids on a model the test wrote."""
    r = run_tool(bin_dir, "mint-run", "-m", synth_path, "--prompt-ids", "1,20,30,40", "-n", 24,
                 "--temp", 0, "-t", 1, "-c", 256, "--json", "--ignore-eos")  # fmt: skip
    want = [json.loads(line)["id"] for line in stdout(r).splitlines()]
    got = [t.id for t in synth.generate([1, 20, 30, 40], max_tokens=24, temperature=0,
                                        stream=True, ignore_eos=True)]  # fmt: skip
    assert got == want and len(got) == 24


def test_n_parallel_is_mint_runs(stories, stories_path, bin_dir):
    r = run_tool(bin_dir, "mint-run", "-m", stories_path, "-p", "Once upon a time", "-n", 32,
                 "--n-parallel", 3, "-s", 5, "-t", 1)  # fmt: skip
    lines = stdout(r).split("\n")
    assert lines[0] == "Once upon a time"
    want = [line[len(f"[{i + 1}] "):] for i, line in enumerate(lines[1:4])]
    got = stories.generate_many("Once upon a time", 3, max_tokens=32, seed=5)
    assert got == want
    assert len(set(got)) > 1  # three seeds, different draws


def test_beam_search_is_mint_runs(stories, stories_path, bin_dir):
    r = run_tool(bin_dir, "mint-run", "-m", stories_path, "-p", "Once upon a time", "-n", 40,
                 "--beams", 3, "-t", 1)  # fmt: skip
    got = stories.beam_search("Once upon a time", n_beams=3, max_tokens=40)
    assert stdout(r) == "Once upon a time" + got["text"] + "\n"
    assert got["logprob"] < 0 and 0 < len(got["tokens"]) <= 40


def test_prompt_lookup_is_mint_runs_and_greedy(stories, stories_path, bin_dir):
    prompt = "Lily saw a dog. Lily saw a cat. Lily saw a"
    r = run_tool(bin_dir, "mint-run", "-m", stories_path, "-p", prompt, "-n", 40, "--lookup", 3,
                 "--temp", 0, "-t", 1)  # fmt: skip
    got = stories.speculative(prompt, lookup_n=3, max_tokens=40)
    assert stdout(r) == prompt + got["text"] + "\n"
    # With temperature 0, speculative decoding gives the greedy text.
    assert got["text"] == stories.generate(prompt, max_tokens=40, temperature=0)
    st = got["stats"]
    assert st["generated"] == len(got["tokens"]) and st["target_passes"] <= st["generated"]


def test_draft_model_is_mint_runs(stories, stories_path, data_dir, bin_dir):
    draft = data_dir / "quant" / "stories260K-q8_0.gguf"
    if not draft.exists():
        pytest.skip(f"{draft} is missing")
    r = run_tool(bin_dir, "mint-run", "-m", stories_path, "-p", "Once upon a time", "-n", 40,
                 "--draft", draft, "--draft-n", 4, "--temp", 0, "-t", 1)  # fmt: skip
    got = stories.speculative("Once upon a time", draft=draft, n_draft=4, max_tokens=40)
    assert stdout(r) == "Once upon a time" + got["text"] + "\n"
    assert got["stats"]["drafted"] > 0 and 0 < got["stats"]["acceptance"] <= 1


def test_chat_reply_is_mint_run_cnvs(stories, stories_path, bin_dir):
    r = run_tool(bin_dir, "mint-run", "-m", stories_path, "-cnv", "--chat-template", "zephyr",
                 "--temp", 0, "-n", 32, "-t", 1, stdin=b"Tell me a story\n")  # fmt: skip
    out = stories.create_chat_completion(
        [{"role": "user", "content": "Tell me a story"}], chat_template="zephyr",
        temperature=0, max_tokens=32,
    )  # fmt: skip
    assert stdout(r) == out["choices"][0]["message"]["content"] + "\n"


def test_the_model_context_is_reused_and_prefixes_are_kept(stories):
    a = stories.generate("Once upon a time", max_tokens=20, temperature=0)
    ctx = stories._context()
    before = ctx.n_evaluated
    b = stories.generate("Once upon a time", max_tokens=20, temperature=0)
    assert a == b
    # The prompt's tokens were held in the cache: only the last prompt token was evaluated again.
    assert ctx.n_evaluated - before == 1 + 19


# (Python arguments, mint-run's flags for the same values, what the message must say.)
OUT_OF_RANGE = [
    ({"temperature": -2}, ["--temp", -2], "temperature -2 is outside [0, 1000000]"),
    ({"temperature": 2e6}, ["--temp", 2e6], "temperature 2e+06 is outside [0, 1000000]"),
    ({"top_k": -1}, ["--top-k", -1], "top_k -1 is outside [0, 1073741824]"),
    ({"top_p": 0}, ["--top-p", 0], "top_p 0 is outside (0, 1]"),
    ({"top_p": 1.5}, ["--top-p", 1.5], "top_p 1.5 is outside (0, 1]"),
    ({"min_p": -0.5}, ["--min-p", -0.5], "min_p -0.5 is outside [0, 1]"),
    ({"min_p": 1.5}, ["--min-p", 1.5], "min_p 1.5 is outside [0, 1]"),
    ({"repeat_penalty": 0}, ["--repeat-penalty", 0], "repeat_penalty 0 is outside [0.001, 1000]"),
    ({"repeat_penalty": -1}, ["--repeat-penalty", -1], "repeat_penalty -1 is outside [0.001, 1000]"),
    ({"repeat_penalty": 2000}, ["--repeat-penalty", 2000], "repeat_penalty 2000 is outside [0.001, 1000]"),
    ({"repeat_last_n": -1}, ["--repeat-last-n", -1], "repeat_last_n -1 is outside [0, 1048576]"),
    ({"max_tokens": -2}, ["-n", -2], "max_tokens -2 is outside -1..16777216"),
    ({"max_tokens": 2**24 + 1}, ["-n", 2**24 + 1], "max_tokens 16777217 is outside -1..16777216"),
]


@pytest.mark.parametrize("kwargs, flags, message", OUT_OF_RANGE)
def test_out_of_range_sampling_values_are_refused_as_mint_run_refuses_them(
    synth, synth_path, bin_dir, kwargs, flags, message
):
    r = run_tool(bin_dir, "mint-run", "-m", synth_path, "--prompt-ids", "1,2", "-t", 1, *flags,
                 check=False)  # fmt: skip
    assert r.returncode in (1, 2), (flags, r.returncode, r.stderr)
    for call in (
        lambda: synth.generate("a", **kwargs),
        lambda: synth.generate("a", stream=True, **kwargs),  # refused at the call, not later
        lambda: synth.generate_many("a", 2, **kwargs),
        lambda: synth.create_completion("a", **kwargs),
    ):
        with pytest.raises(ValueError) as e:
            call()
        assert isinstance(e.value, mint.MintArgumentError)
        assert message in str(e.value), str(e.value)
    if "max_tokens" not in kwargs:
        with pytest.raises(ValueError, match=re.escape(message)):
            synth.sampler(**kwargs)


def test_the_edges_of_the_sampling_ranges_are_accepted_as_mint_run_accepts_them(
    synth, synth_path, bin_dir
):
    low = {"temperature": 0, "top_k": 0, "top_p": 1e-6, "min_p": 0, "repeat_penalty": 0.001,
           "repeat_last_n": 0, "max_tokens": 0}  # fmt: skip
    high = {"temperature": 1e6, "top_k": 2**30, "top_p": 1, "min_p": 1, "repeat_penalty": 1000,
            "repeat_last_n": 2**20, "max_tokens": 4}  # fmt: skip
    flags = {"temperature": "--temp", "top_k": "--top-k", "top_p": "--top-p", "min_p": "--min-p",
             "repeat_penalty": "--repeat-penalty", "repeat_last_n": "--repeat-last-n",
             "max_tokens": "-n"}  # fmt: skip
    for kw in (low, high):
        args = [a for k, v in kw.items() for a in (flags[k], v)]
        run_tool(bin_dir, "mint-run", "-m", synth_path, "--prompt-ids", "1,2", "-t", 1, "-c", 64,
                 "-s", 1, *args)  # fmt: skip
        assert isinstance(synth.generate([1, 2], seed=1, **kw), str)
    # -1 is no limit, as mint-run's -n -1: the generation runs to end-of-generation or a full context.
    assert isinstance(synth.generate([1, 2], max_tokens=-1, temperature=0), str)
