"""pytest plugin for running llama.cpp's own server test suite (tools/server/tests/unit of its
source tree) against mint-serve: tools/scripts/llama-server-suite.sh loads it with -p.

It changes nothing the tests send or check. It does only what an offline machine needs:
- ServerPreset.load_all, which starts every preset once to download its model, becomes a no-op
  (there is nothing to download; mint never downloads);
- a test whose model is not in the local Hugging Face cache (LLAMA_CACHE, filled by the script) is
  skipped with the model's name, before the server starts, instead of erroring;
- when OpenAI's Python client is not installed (Debian has no package for it), the test files
  still import, and a test that calls openai.OpenAI(...) is skipped saying so.
"""
import os
import sys
import types

import pytest


def _install_openai_stub():
    try:
        import openai  # noqa: F401
        return
    except ImportError:
        pass
    stub = types.ModuleType("openai")

    def _skip(*args, **kwargs):
        pytest.skip("OpenAI's Python client is not installed (Debian has no package for it)")

    stub.OpenAI = _skip
    stub.AsyncOpenAI = _skip
    sys.modules["openai"] = stub


_install_openai_stub()


def _cached(repo, hf_file):
    """Whether repo (owner/name[:quant]) and hf_file are in the cache, as mint-serve looks."""
    cache = os.environ.get("LLAMA_CACHE", "")
    name, _, quant = repo.partition(":")
    folder = os.path.join(cache, "models--" + name.replace("/", "--"))
    try:
        with open(os.path.join(folder, "refs", "main")) as f:
            commit = f.read().strip()
    except OSError:
        return False
    snap = os.path.join(folder, "snapshots", commit)
    if hf_file:
        return os.path.isfile(os.path.join(snap, hf_file))
    try:
        return any(f.endswith(".gguf") and "mmproj" not in f for f in os.listdir(snap))
    except OSError:
        return False


def pytest_configure(config):
    import utils  # the suite's own module (tools/server/tests/utils.py)

    utils.ServerPreset.load_all = staticmethod(lambda: None)
    # the router tests write their preset files into the suite's tmp folder, which its model
    # downloads would have made
    os.makedirs(utils.TMP_DIR, exist_ok=True)
    start = utils.ServerProcess.start

    def start_if_available(self, *args, **kwargs):
        if self.model_hf_repo and not self.model_file:
            if not _cached(self.model_hf_repo, self.model_hf_file):
                pytest.skip(
                    "model %s%s is not available offline"
                    % (self.model_hf_repo, " " + self.model_hf_file if self.model_hf_file else "")
                )
        return start(self, *args, **kwargs)

    utils.ServerProcess.start = start_if_available


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item):
    """A test whose fixture made a server of an absent model is skipped before its body runs:
    some bodies fetch their inputs from the network first (test_vision_api.py downloads its
    images from huggingface.co), which fails here before the server would say the model is
    missing."""
    import utils

    srv = getattr(item.module, "server", None)
    if (isinstance(srv, utils.ServerProcess) and srv.model_hf_repo and not srv.model_file
            and not _cached(srv.model_hf_repo, srv.model_hf_file)):
        pytest.skip("model %s%s is not available offline"
                    % (srv.model_hf_repo, " " + srv.model_hf_file if srv.model_hf_file else ""))
