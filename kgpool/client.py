"""A small typed Python client of kgpool's API (/api/v1/), built on httpx.

    from kgpool.client import Client
    kg = Client("http://127.0.0.1:8000", token="...")     # a token: python manage.py drf_create_token USER
    kg.upload_kg("nations", "../shared/data/nations")     # waits for the background import
    kg.train("nations", "distmult", epochs=50)            # waits until the system is ready
    ...

Every call returns the JSON the API answers (dicts and lists; the TypedDicts below name their main fields),
waits for background work when asked to (``wait=True``, the default), and raises :class:`ApiError` with the
status and the server's one-line reason on any 4xx/5xx. Tests pass ``transport=httpx.WSGITransport(app=...)`` to
run against an in-process server. No Django needed.
"""
from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO, TypedDict

import httpx

__all__ = ["ApiError", "Client"]


class ApiError(Exception):
    """A 4xx/5xx answer: ``status`` and the server's ``detail``."""

    def __init__(self, status: int, detail: Any, method: str, url: str):
        self.status, self.detail = status, detail
        super().__init__(f"{method} {url}: {status} {detail}")


class Upload(TypedDict):
    id: int
    kind: str
    name: str
    status: str  # pending, running, done, failed
    progress_done: int
    progress_total: int
    error: str
    kg: str | None
    system: str | None


class System(TypedDict):
    name: str
    architecture: str
    status: str  # pending, training, ready, failed
    error: str
    valid_mrr: float | None
    test_mrr: float | None


class Pool(TypedDict):
    id: int
    name: str
    kg: str
    sample: str
    depth: int
    systems: list[str]
    status: str  # pending, running, done, failed
    entries: int
    error: str


class HandOut(TypedDict):
    hand_out: int | None  # None: nothing left for you
    item: dict[str, Any] | None
    request_id: str
    allowed_domains: list[str]


class Run(TypedDict):
    id: int
    status: str  # pending, running, done, failed
    stage: str
    error: str
    files: list[str]


KG_FILES = {"train": ("train.txt",), "valid": ("valid.txt",), "test": ("test.txt",),
            "entity_names": ("entity_names.tsv", "entity2text.txt"), "wikidata": ("entity_wikidata.json",),
            "relation_types": ("relation_types.tsv",), "relation_text": ("relation_text.tsv", "relation2text.txt"),
            "entity_types": ("entity2types.json",), "type_labels": ("types.json",),
            "relation_labels": ("relations.json",)}


class Client:
    """kgpool's API at ``base_url`` (the site's address), authenticated with an API ``token``."""

    def __init__(self, base_url: str = "http://127.0.0.1:8000", *, token: str | None = None,
                 transport: httpx.BaseTransport | None = None, timeout: float = 300.0, poll: float = 1.0):
        headers = {"Authorization": f"Token {token}"} if token else {}
        self.http = httpx.Client(base_url=base_url.rstrip("/") + "/api/v1/", headers=headers, transport=transport,
                                 timeout=timeout)
        self.poll = poll

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------------------------------ plumbing
    def _call(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        return self._checked(self.http.request(method, path, **kwargs))

    @staticmethod
    def _checked(response: httpx.Response) -> httpx.Response:
        if response.status_code >= 400:
            response.read()
            try:
                detail = response.json()
                detail = detail.get("detail", detail) if isinstance(detail, dict) else detail
            except ValueError:
                detail = response.text[:500]
            raise ApiError(response.status_code, detail, response.request.method, str(response.request.url))
        return response

    def get(self, path: str, **params: Any) -> Any:
        return self._call("GET", path, params={k: v for k, v in params.items() if v is not None}).json()

    def post(self, path: str, json: Any = None, **kwargs: Any) -> Any:
        return self._call("POST", path, json=json, **kwargs).json()

    def wait(self, path: str, done: tuple[str, ...] = ("done", "ready", "failed"), timeout: float | None = None,
             field: str = "status") -> dict[str, Any]:
        """GET ``path`` until its ``status`` is one of ``done`` (or ``timeout`` seconds pass: TimeoutError)."""
        started = time.monotonic()
        while True:
            current = self.get(path)
            if current[field] in done:
                return current
            if timeout is not None and time.monotonic() - started > timeout:
                raise TimeoutError(f"{path} still {current[field]} after {timeout:.0f} s")
            time.sleep(self.poll)

    # ---------------------------------------------------------------------------- knowledge graphs
    def kgs(self) -> list[dict[str, Any]]:
        return self.get("kgs/")

    def kg(self, name: str) -> dict[str, Any]:
        return self.get(f"kgs/{name}/")

    def upload_kg(self, name: str, folder: str | Path | None = None, *, files: dict[str, str | Path] | None = None,
                  description: str = "", wait: bool = True, timeout: float | None = None) -> Upload:
        """Upload a dataset folder (train.txt, valid.txt, test.txt and the metadata files found beside them under
        their usual names) or ``files`` (field -> path: train, valid, test, entity_names...). Waits for the
        import unless ``wait`` is False; a failed import raises ApiError (422) with the reason."""
        paths = dict(files or {})
        if folder is not None:
            for field, names in KG_FILES.items():
                found = next((Path(folder) / n for n in names if (Path(folder) / n).is_file()), None)
                if found is not None:
                    paths.setdefault(field, found)
        handles = {field: open(path, "rb") for field, path in paths.items()}
        try:
            upload = self.post("kgs/", data={"name": name, "description": description},
                               files={f: (Path(p).name, handles[f]) for f, p in paths.items()}, json=None)
        finally:
            for handle in handles.values():
                handle.close()
        return self._finished_upload(upload, wait, timeout)

    def upload(self, upload_id: int) -> Upload:
        return self.get(f"uploads/{upload_id}/")

    def _finished(self, created: dict[str, Any], path: str, action: str, wait: bool, timeout: float | None,
                  done: tuple[str, ...] = ("done", "failed")) -> Any:
        """``created`` as it is once its background work ends (unless ``wait`` is False); a failure raises
        ApiError (422) with the server's reason."""
        if not wait:
            return created
        finished = self.wait(path, done, timeout)
        if finished["status"] == "failed":
            raise ApiError(422, finished["error"], action, path)
        return finished

    def _finished_upload(self, upload: Upload, wait: bool, timeout: float | None) -> Upload:
        return self._finished(upload, f"uploads/{upload['id']}/", "upload", wait, timeout)

    # ------------------------------------------------------------------------------------- systems
    def systems(self, kg: str) -> list[System]:
        return self.get(f"kgs/{kg}/systems/")

    def system(self, kg: str, name: str) -> System:
        return self.get(f"kgs/{kg}/systems/{name}/")

    def train(self, kg: str, architecture: str, *, name: str | None = None, wait: bool = True,
              timeout: float | None = None, **options: Any) -> System:
        """Train a system (options: dim, epochs, lr, batch_size, seed, patience, eval_every, device, num_threads)."""
        body = {"architecture": architecture, **({"name": name} if name else {}), **options}
        system = self.post(f"kgs/{kg}/systems/", body)
        return self._finished(system, f"kgs/{kg}/systems/{system['name']}/", "train", wait, timeout,
                              ("ready", "failed"))

    def import_system(self, kg: str, kind: str, name: str, file: str | Path, *, sample: str | None = None,
                      questions: str | Path | None = None, entities: str | Path | None = None,
                      model: str | None = None, description: str = "", wait: bool = True,
                      timeout: float | None = None) -> Upload:
        """Import a system: ``kind`` scores (a score matrix on ``sample``), run (a TREC run on ``sample``) or
        checkpoint (a PyKEEN model)."""
        paths = {kind: file, "questions": questions, "entities": entities}
        paths = {k: Path(v) for k, v in paths.items() if v is not None}
        data = {"kind": kind, "name": name, "description": description, **({"sample": sample} if sample else {}),
                **({"model": model} if model else {})}
        handles: dict[str, BinaryIO] = {k: open(v, "rb") for k, v in paths.items()}
        try:
            upload = self.post(f"kgs/{kg}/systems/import/", data=data,
                               files={k: (p.name, handles[k]) for k, p in paths.items()})
        finally:
            for handle in handles.values():
                handle.close()
        return self._finished_upload(upload, wait, timeout)

    # ------------------------------------------------------------------------------------- samples
    def samples(self, kg: str) -> list[dict[str, Any]]:
        return self.get(f"kgs/{kg}/samples/")

    def sample(self, kg: str, name: str) -> dict[str, Any]:
        return self.get(f"kgs/{kg}/samples/{name}/")

    def draw_sample(self, kg: str, size: int, *, seed: int = 0, stratified: bool = False,
                    name: str | None = None) -> dict[str, Any]:
        return self.post(f"kgs/{kg}/samples/", {"size": size, "seed": seed, "stratified": stratified,
                                                **({"name": name} if name else {})})

    # --------------------------------------------------------------------------------------- pools
    def pools(self, kg: str | None = None) -> list[Pool]:
        return self.get("pools/", kg=kg)

    def pool(self, pool_id: int) -> Pool:
        return self.get(f"pools/{pool_id}/")

    def build_pool(self, kg: str, sample: str, systems: list[str], depth: int, *, name: str | None = None,
                   wait: bool = True, timeout: float | None = None) -> Pool:
        pool = self.post("pools/", {"kg": kg, "sample": sample, "systems": systems, "depth": depth,
                                    **({"name": name} if name else {})})
        return self._finished(pool, f"pools/{pool['id']}/", "build", wait, timeout)

    def pool_entries(self, pool_id: int, *, page_size: int = 1000, max_depth: int | None = None
                     ) -> Iterator[dict[str, Any]]:
        """Every candidate of the pool with its provenance (hits), page after page."""
        page = 1
        while True:
            data = self.get(f"pools/{pool_id}/entries/", page=page, page_size=page_size, max_depth=max_depth)
            yield from data["results"]
            if not data["next"]:
                return
            page += 1

    # ----------------------------------------------------------------------------------- campaigns
    def campaigns(self) -> list[dict[str, Any]]:
        return self.get("campaigns/")

    def campaign(self, name: str) -> dict[str, Any]:
        return self.get(f"campaigns/{name}/")

    def create_campaign(self, name: str, pool: int, **settings: Any) -> dict[str, Any]:
        """Settings: description, allowed_domains, assignment_timeout_s, gold_rate, rushed_factor, gold_threshold,
        evidence_policy (yes, no, both, never: for which answers a source URL is required),
        judging_order, item_budget, seed, reuse, filters (rules), gold (add gold checks)."""
        return self.post("campaigns/", {"name": name, "pool": pool, **settings})

    def update_campaign(self, name: str, **settings: Any) -> dict[str, Any]:
        return self._call("PATCH", f"campaigns/{name}/", json=settings).json()

    def members(self, name: str) -> list[dict[str, Any]]:
        return self.get(f"campaigns/{name}/members/")

    def add_member(self, name: str, username: str, role: str) -> list[dict[str, Any]]:
        return self.post(f"campaigns/{name}/members/", {"username": username, "role": role})

    def remove_member(self, name: str, username: str, role: str) -> list[dict[str, Any]]:
        return self._call("DELETE", f"campaigns/{name}/members/{username}/{role}/").json()

    def progress(self, name: str) -> dict[str, Any]:
        return self.get(f"campaigns/{name}/progress/")

    def quality(self, name: str, *, samples: int = 200) -> dict[str, Any]:
        return self.get(f"campaigns/{name}/quality/", samples=samples)

    def export(self, name: str, fmt: str = "labels", path: str | Path | None = None, *,
               annotator: str | None = None) -> bytes | Path:
        """An export's bytes, or written (streamed) to ``path``: labels, positives, questions, qrels, jsonl, csv,
        labels-origin, qrels-annotator (``annotator``), readme, bundle (.tar.gz)."""
        params = {"annotator": annotator} if annotator else {}
        with self.http.stream("GET", f"campaigns/{name}/exports/{fmt}/", params=params) as response:
            self._checked(response)
            if path is None:
                return response.read()
            path = Path(path)
            with open(path, "wb") as out:
                for chunk in response.iter_bytes():
                    out.write(chunk)
            return path

    # -------------------------------------------------------------------------------------- judging
    def next_item(self, name: str) -> HandOut:
        return self.post(f"campaigns/{name}/next-item/")

    def judge(self, name: str, hand_out: int, answer: str, source_url: str = "", *, quote: str = "",
              request_id: str = "", next: bool = False) -> dict[str, Any]:
        """Answer ``hand_out``; with ``next`` the answer also carries my next hand-out (``["next"]``, what
        :meth:`next_item` would give): one request per item."""
        body = {"answer": answer, "source_url": source_url, "quote": quote, "request_id": request_id}
        return self.post(f"campaigns/{name}/hand-outs/{hand_out}/judgment/", {**body, **({"next": True} if next else {})})

    def skip(self, name: str, hand_out: int) -> dict[str, Any]:
        return self.post(f"campaigns/{name}/hand-outs/{hand_out}/skip/")

    def undo(self, name: str, hand_out: int) -> HandOut:
        """Undo my answer of ``hand_out`` (answer "C" with a ``quote`` is "can't tell"); the hand-out opens again."""
        return self.post(f"campaigns/{name}/hand-outs/{hand_out}/undo/")

    def next_adjudication(self, name: str) -> dict[str, Any]:
        return self.post(f"campaigns/{name}/next-adjudication/")

    def adjudicate(self, name: str, hand_out: int, label: str, reason: str) -> dict[str, Any]:
        return self.post(f"campaigns/{name}/hand-outs/{hand_out}/adjudication/", {"label": label, "reason": reason})

    # ---------------------------------------------------------------------------------- evaluation
    def evaluations(self) -> list[Run]:
        return self.get("evaluations/")

    def evaluation(self, run_id: int) -> Run:
        return self.get(f"evaluations/{run_id}/")

    def evaluate(self, kg: str, sample: str, *, campaign: str | None = None, systems: list[str] | None = None,
                 wait: bool = True, timeout: float | None = None, **options: Any) -> Run:
        """Evaluate the sample's systems (options: policy, cutoff, depths, analyses, open_world, dp_test)."""
        body: dict[str, Any] = {"kg": kg, "sample": sample, **({"campaign": campaign} if campaign else {}),
                                **({"systems": systems} if systems else {}), **({"options": options} if options else {})}
        run = self.post("evaluations/", body)
        return self._finished(run, f"evaluations/{run['id']}/", "evaluate", wait, timeout)

    def results(self, run_id: int) -> dict[str, Any]:
        """The run's results: tables per label set and system, Kendall's tau, depth curve, ..."""
        return self.get(f"evaluations/{run_id}/results/")

    def evaluation_file(self, run_id: int, name: str, path: str | Path | None = None) -> bytes | Path:
        data = self._call("GET", f"evaluations/{run_id}/files/{name}").content
        if path is None:
            return data
        Path(path).write_bytes(data)
        return Path(path)
