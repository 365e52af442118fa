"""kgpool.client waits for background work (training, pool builds, evaluations) and turns a failure into ApiError:
driven through httpx's MockTransport, a fake server whose jobs are pending twice, then end as scripted."""
from __future__ import annotations


import httpx
import pytest

from kgpool.client import ApiError, Client


def fake_server(final: dict[str, dict]) -> tuple[httpx.MockTransport, list[str]]:
    """POSTs create a job (status "queued"); GETs of it answer "running" twice, then ``final[path]``."""
    seen: list[str] = []
    polls: dict[str, int] = {}

    def handle(request: httpx.Request) -> httpx.Response:
        path = request.url.path.removeprefix("/api/v1/")
        seen.append(f"{request.method} {path}")
        if request.method == "POST":
            created = {"kgs/nations/systems/": {"name": "d", "status": "queued"}, "pools/": {"id": 7, "status": "queued"},
                       "evaluations/": {"id": 3, "status": "queued"}}[path]
            return httpx.Response(202, json=created)
        polls[path] = polls.get(path, 0) + 1
        if polls[path] <= 2:
            return httpx.Response(200, json={"status": "running"})
        return httpx.Response(200, json=final[path])

    return httpx.MockTransport(handle), seen


def test_training_waits_until_ready_and_returns_the_final_state():
    transport, seen = fake_server({"kgs/nations/systems/d/": {"name": "d", "status": "ready", "valid_mrr": 0.5}})
    with Client("http://test", transport=transport, poll=0) as client:
        system = client.train("nations", "distmult", name="d")
    assert system == {"name": "d", "status": "ready", "valid_mrr": 0.5}
    assert seen.count("GET kgs/nations/systems/d/") == 3


@pytest.mark.parametrize("call, path, action", [
    (lambda c: c.build_pool("nations", "s", ["d"], 3), "pools/7/", "build"),
    (lambda c: c.evaluate("nations", "s"), "evaluations/3/", "evaluate"),
    (lambda c: c.train("nations", "distmult", name="d"), "kgs/nations/systems/d/", "train"),
])
def test_a_failed_job_raises_api_error_with_the_servers_reason(call, path, action):
    transport, _ = fake_server({path: {"status": "failed", "error": "out of memory on worker gpu-2"}})
    with Client("http://test", transport=transport, poll=0) as client, pytest.raises(ApiError) as failed:
        call(client)
    assert failed.value.status == 422
    assert "out of memory on worker gpu-2" in str(failed.value)
    assert path in str(failed.value) and action in str(failed.value)


def test_no_wait_returns_the_created_job_without_polling():
    transport, seen = fake_server({})
    with Client("http://test", transport=transport, poll=0) as client:
        pool = client.build_pool("nations", "s", ["d"], 3, wait=False)
    assert pool == {"id": 7, "status": "queued"} and seen == ["POST pools/"]


def test_a_job_still_running_after_the_timeout_raises_timeout_error():
    def always_running(request: httpx.Request) -> httpx.Response:
        if request.method == "POST":
            return httpx.Response(202, json={"id": 3, "status": "queued"})
        return httpx.Response(200, json={"status": "running"})

    with Client("http://test", transport=httpx.MockTransport(always_running), poll=0.01) as client:
        with pytest.raises(TimeoutError, match="still running"):
            client.evaluate("nations", "s", timeout=0.05)
