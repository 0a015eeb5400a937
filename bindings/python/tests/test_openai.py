"""create_completion and create_chat_completion: OpenAI-shaped dicts, whole and streamed."""

import json

import pytest

import mint

MSGS = [
    {"role": "system", "content": "You tell short stories."},
    {"role": "user", "content": "Tell me a story about a cat"},
]


def check_envelope(r, object_, prefix):
    assert r["object"] == object_
    assert r["id"].startswith(prefix) and len(r["id"]) > len(prefix)
    assert isinstance(r["created"], int) and r["created"] > 1_600_000_000
    assert isinstance(r["model"], str) and r["model"].endswith(".gguf")
    json.dumps(r)  # plain JSON types only


def check_usage(r, n_completion=None):
    u = r["usage"]
    assert set(u) == {"prompt_tokens", "completion_tokens", "total_tokens"}
    assert u["total_tokens"] == u["prompt_tokens"] + u["completion_tokens"]
    assert u["prompt_tokens"] > 0
    if n_completion is not None:
        assert u["completion_tokens"] == n_completion


def test_chat_completion_is_well_formed(stories):
    r = stories.create_chat_completion(MSGS, chat_template="zephyr", max_tokens=24, seed=1)
    check_envelope(r, "chat.completion", "chatcmpl-")
    assert len(r["choices"]) == 1
    c = r["choices"][0]
    assert set(c) == {"index", "message", "logprobs", "finish_reason"}
    assert c["index"] == 0 and c["logprobs"] is None
    assert c["message"]["role"] == "assistant" and isinstance(c["message"]["content"], str)
    assert c["finish_reason"] in ("stop", "length")
    check_usage(r)
    assert r["usage"]["completion_tokens"] <= 24
    if c["finish_reason"] == "length":
        assert r["usage"]["completion_tokens"] == 24


def test_chat_prompt_is_the_template_rendered(stories):
    text = stories.apply_chat_template(MSGS, chat_template="zephyr")
    # llama.cpp's "zephyr": each turn ends with the text <|endoftext|>.
    assert text == ("<|system|>\nYou tell short stories.<|endoftext|>\n<|user|>\nTell me a story "
                    "about a cat<|endoftext|>\n<|assistant|>\n")  # fmt: skip
    r = stories.create_chat_completion(MSGS, chat_template="zephyr", max_tokens=4, temperature=0)
    ids = stories.tokenize(text, add_bos=True, special=True)
    assert r["usage"]["prompt_tokens"] == len(ids)


def test_a_model_without_a_template_says_so(stories, synth):
    # The library's refusal: the same words mint-run -cnv and mint-serve give.
    with pytest.raises(mint.MintNotFoundError, match="no chat template.*--chat-template-file"):
        stories.create_chat_completion(MSGS)
    with pytest.raises(mint.MintArgumentError, match="'nope' is not one of llama.cpp's.*zephyr"):
        stories.create_chat_completion(MSGS, chat_template="nope")


def test_chat_stream_chunks_join_to_the_whole_reply(stories):
    whole = stories.create_chat_completion(MSGS, chat_template="chatml", max_tokens=30, temperature=0)
    chunks = list(stories.create_chat_completion(MSGS, chat_template="chatml", max_tokens=30,
                                                 temperature=0, stream=True))  # fmt: skip
    for ch in chunks:
        check_envelope(ch, "chat.completion.chunk", "chatcmpl-")
        assert len(ch["choices"]) == 1 and "delta" in ch["choices"][0]
    assert len({ch["id"] for ch in chunks}) == 1
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    assert chunks[-1]["choices"][0]["delta"] == {}
    assert chunks[-1]["choices"][0]["finish_reason"] == whole["choices"][0]["finish_reason"]
    assert all(ch["choices"][0]["finish_reason"] is None for ch in chunks[:-1])
    text = "".join(ch["choices"][0]["delta"].get("content", "") for ch in chunks)
    assert text == whole["choices"][0]["message"]["content"]


def test_chat_logprobs(stories):
    r = stories.create_chat_completion(MSGS, chat_template="zephyr", max_tokens=6,
                                       temperature=0, logprobs=True, top_logprobs=3)  # fmt: skip
    content = r["choices"][0]["logprobs"]["content"]
    assert len(content) == r["usage"]["completion_tokens"] == 6
    for item in content:
        assert set(item) == {"token", "logprob", "bytes", "top_logprobs"}
        assert item["logprob"] <= 0 and bytes(item["bytes"]).decode() == item["token"]
        assert len(item["top_logprobs"]) == 3
        # Greedy: the token is the most likely one.
        assert item["top_logprobs"][0]["logprob"] == item["logprob"]
    assert "".join(i["token"] for i in content) == r["choices"][0]["message"]["content"]


def test_completion_is_well_formed_and_greedy_is_generate(stories):
    r = stories.create_completion("Once upon a time", max_tokens=20, temperature=0)
    check_envelope(r, "text_completion", "cmpl-")
    c = r["choices"][0]
    assert set(c) == {"text", "index", "logprobs", "finish_reason"}
    assert c["text"] == stories.generate("Once upon a time", max_tokens=20, temperature=0)
    assert c["finish_reason"] == "length"
    check_usage(r, 20)
    assert r["usage"]["prompt_tokens"] == len(stories.tokenize("Once upon a time"))
    # Calling the model is create_completion, as with llama_cpp.Llama.
    assert stories("Once upon a time", max_tokens=20, temperature=0)["choices"][0]["text"] == c["text"]


def test_completion_echo_stop_and_logprobs(stories):
    full = stories.generate("Once upon a time", max_tokens=40, temperature=0)
    assert "girl" in full
    r = stories.create_completion("Once upon a time", max_tokens=40, temperature=0, stop=["girl"],
                                  echo=True, logprobs=2)  # fmt: skip
    c = r["choices"][0]
    assert c["text"] == "Once upon a time" + full[: full.index("girl")]
    assert c["finish_reason"] == "stop"
    lp = c["logprobs"]
    n = len(lp["tokens"])
    assert n == len(lp["token_logprobs"]) == len(lp["top_logprobs"]) == len(lp["text_offset"])
    assert lp["text_offset"][0] == len("Once upon a time")
    assert all(len(t) == 2 for t in lp["top_logprobs"])
    assert "".join(lp["tokens"]).startswith(full[: full.index("girl")].rstrip())


def test_completion_stream_matches_whole(stories):
    whole = stories.create_completion("One day", max_tokens=25, temperature=0, stop=".")
    chunks = list(stories.create_completion("One day", max_tokens=25, temperature=0, stop=".",
                                            stream=True))  # fmt: skip
    for ch in chunks:
        check_envelope(ch, "text_completion", "cmpl-")
    text = "".join(ch["choices"][0]["text"] for ch in chunks)
    assert text == whole["choices"][0]["text"] and "." not in text
    assert chunks[-1]["choices"][0]["finish_reason"] == whole["choices"][0]["finish_reason"] == "stop"


def test_completion_on_a_synthetic_model(synth):
    """No shared data: the shapes hold on a model the test wrote (its text is noise)."""
    r = synth.create_completion([1, 20, 30], max_tokens=8, temperature=0, ignore_eos=True)
    check_envelope(r, "text_completion", "cmpl-")
    check_usage(r, 8)
    r = synth.create_chat_completion([{"role": "user", "content": "hi"}], chat_template="chatml",
                                     max_tokens=5, temperature=0)  # fmt: skip
    check_envelope(r, "chat.completion", "chatcmpl-")
    assert r["usage"]["completion_tokens"] <= 5
