"""The Filter Lab: experiment limits and counts, the JSON API, and the page in a real headless
Chromium (Debian's chromium + chromium-driver, driven by selenium)."""

import importlib
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import pytest

from seqsift.errors import UsageError
from seqsift.lab import server
from seqsift.lab.experiment import SLOT, Cancelled, Settings, run


@pytest.mark.parametrize("field,value", [("signatures", 999), ("signatures", 200_001), ("hit_rate", 0.51),
                                         ("data_mb", 257), ("buffer_mb", 0), ("threads", 0), ("block_threshold", -1)])
def test_limits_are_enforced_with_a_message(field, value):
    with pytest.raises(UsageError, match=field):
        Settings(**{field: value}).check()


def test_hits_rise_with_the_hit_rate():
    none = run(Settings(signatures=1000, data_mb=2, buffer_mb=1))
    some = run(Settings(signatures=1000, data_mb=2, buffer_mb=1, hit_rate=0.2))
    planted = round(0.2 * (2 << 20) // SLOT)
    assert none["candidates"] == none["confirmed"] == 0
    assert some["confirmed"] >= planted and some["candidates"] >= some["confirmed"]
    assert some["buffers"] == 2 and set(some["stage_ms_per_buffer"]) == {"fill", "filter", "readback", "verify"}


def test_overflow_past_65536_signatures():
    result = run(Settings(signatures=70_000, data_mb=1, buffer_mb=1))
    assert result["table"]["one_per_key_lost"] >= 70_000 - 65_536
    assert "would lose" in server._overflow(result["table"])


def test_cancel_and_busy():
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(Cancelled):
        run(Settings(signatures=1000, data_mb=2, buffer_mb=1), cancel)
    client = server.make_app().server.test_client()
    assert server._busy.acquire(blocking=False)
    try:
        reply = client.post("/api/run", json={"signatures": 1000, "data_mb": 1})
        assert reply.status_code == 409 and "already running" in reply.json["message"]
    finally:
        server._busy.release()


def test_api_runs_and_refuses_bad_settings():
    client = server.make_app().server.test_client()
    reply = client.post("/api/run", json={"signatures": 1000, "data_mb": 1, "buffer_mb": 1, "hit_rate": 0.1})
    assert reply.status_code == 200 and reply.json["confirmed"] > 0 and reply.json["throughput_mbps"] > 0
    assert client.post("/api/run", json={"hit_rate": 0.9}).status_code == 400
    assert client.post("/api/run", json={"nonsense": 1}).status_code == 400
    page = client.get("/")
    assert page.status_code == 200 and b"_dash-config" in page.data


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def lab_url():
    app = server.make_app()
    server.warm_up()
    port = _free_port()
    threading.Thread(target=server.wsgi_server(app, port).run, daemon=True).start()
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.1)
    return f"http://127.0.0.1:{port}/"


def _browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    binary, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if not binary or not driver:
        pytest.skip("the Filter Lab's browser test needs chromium and chromedriver on PATH: run `make browser` as root "
                    "(it installs Debian's chromium and chromium-driver), or install chromium and chromium-driver")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(driver), options=options)


def test_page_in_a_real_browser_shows_throughput_falling(lab_url, tmp_path):
    """Run at 0% hits, move the hit-rate slider to 50%, run again: the chart gains a point and the
    throughput the page reports is lower (candidates and checks cost it: 2.6x or more here)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait

    browser = _browser()
    try:
        browser.get(lab_url)
        wait = WebDriverWait(browser, 120)
        wait.until(lambda b: b.find_elements(By.ID, "run"))
        for box, value in (("data_mb", "16"), ("signatures", "5000")):
            field = browser.find_element(By.ID, box)
            field.send_keys(Keys.CONTROL, "a")
            field.send_keys(value, Keys.TAB)
        browser.find_element(By.ID, "run").click()
        wait.until(lambda b: "MB/s" in b.find_element(By.ID, "status").text)
        first = browser.find_element(By.ID, "status").text
        handle = browser.find_element(By.CSS_SELECTOR, "#hit_rate [role=slider]")  # the thumb: End moves it to 50
        handle.click()
        handle.send_keys(Keys.END)
        browser.find_element(By.ID, "run").click()
        wait.until(lambda b: "at 50% hits" in b.find_element(By.ID, "status").text)
        second = browser.find_element(By.ID, "status").text
        wait.until(lambda b: len(b.find_elements(By.CSS_SELECTOR, "#throughput .scatterlayer .point")) == 2)
        browser.save_screenshot(str(tmp_path / "lab.png"))
    finally:
        browser.quit()
    rate = lambda text: float(re.search(r"([\d.]+) MB/s", text).group(1))  # noqa: E731
    assert "at 0% hits" in first and rate(second) < rate(first)


def test_command_serves_on_localhost_only(monkeypatch):
    from seqsift.cli import main
    from seqsift.lab import command

    served, opened = [], []

    class Waitress:  # the real one, not bound: its address and the calls the command makes
        def __init__(self, app, port):
            self.real = real(app, port)
            self.real.close()
            served.append((self.real.effective_host, self.real.adj.max_request_body_size))

        def run(self):
            served.append("run")

        def close(self):
            served.append("close")

    real = server.wsgi_server
    monkeypatch.setattr(server, "wsgi_server", Waitress)
    monkeypatch.setattr(command.threading, "Timer", lambda delay, fn, args: type("T", (), {"start": lambda s: opened.append(args)})())
    monkeypatch.setattr(server, "warm_up", lambda: None)
    assert main(["lab", "--port", str(_free_port()), "--no-browser", "-q"]) == 0
    assert served == [("127.0.0.1", server.MAX_BODY), "run", "close"] and opened == []
    port = _free_port()
    assert main(["lab", "--port", str(port), "-q"]) == 0
    assert opened == [(f"http://127.0.0.1:{port}/",)]


def _get(url: str, host: str | None = None, body: bytes | None = None):
    """(status, body) of a request, error statuses included."""
    request = urllib.request.Request(url, data=body, headers={"Host": host} if host else {})
    if body is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            return reply.status, reply.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def test_the_command_serves_with_a_production_server(tmp_path):
    """`seqsift lab` in its own process: the page is served, with no "development server" warning
    on stderr, and the request checks hold over a real socket (a foreign Host, a body past the limit)."""
    port = _free_port()
    url = f"http://127.0.0.1:{port}/"
    with open(tmp_path / "stderr", "wb") as err:
        lab = subprocess.Popen([sys.executable, "-m", "seqsift", "lab", "--port", str(port), "--no-browser"],
                               stdout=subprocess.DEVNULL, stderr=err)
    try:
        page = None
        deadline = time.monotonic() + 600  # the warm-up compiles the scanner's kernels on a cold cache
        while page is None and lab.poll() is None and time.monotonic() < deadline:
            try:
                page = _get(url)
            except OSError:
                time.sleep(0.2)
        assert page is not None, (lab.poll(), (tmp_path / "stderr").read_text())
        assert page[0] == 200 and b"_dash-config" in page[1]
        assert _get(url, host="evil.example")[0] == 403
        assert _get(url + "api/run", body=b"{" + b" " * server.MAX_BODY + b"}")[0] == 413
    finally:
        lab.terminate()  # SIGTERM while waitress has answered requests: the command must stop
        try:
            code = lab.wait(timeout=120)
        except subprocess.TimeoutExpired:
            lab.kill()
            code = lab.wait()
    stderr = (tmp_path / "stderr").read_text()
    assert code == 128 + 15, stderr  # cli.py's exit for SIGTERM, after the same clean-up as Ctrl-C
    assert "serving the Filter Lab at " + url in stderr
    assert "development server" not in stderr.lower() and "Running on" not in stderr


def test_charts_before_a_run_show_a_placeholder():
    import plotly.graph_objects as go

    fig = server.placeholder_figure(go, "Throughput against hit rate")
    assert len(fig.data) == 0 and fig.layout.xaxis.visible is False and fig.layout.yaxis.visible is False
    assert [a.text for a in fig.layout.annotations] == ["press Run to measure"]
    graphs = {}

    def walk(node):
        if getattr(node, "id", None) in ("throughput", "stages"):
            graphs[node.id] = node.figure
        for child in node.children if isinstance(getattr(node, "children", None), list) else []:
            walk(child)

    walk(server.make_app().layout)
    assert set(graphs) == {"throughput", "stages"}
    for figure in graphs.values():
        assert figure.layout.annotations[0].text == "press Run to measure" and len(figure.data) == 0


def test_a_busy_port_is_a_clear_error(capsys):
    from seqsift.cli import main

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["lab", "--port", str(port), "--no-browser"]) == 2
    assert f"--port {port}" in capsys.readouterr().err


# -- hostile requests (issue item 10) -----------------------------------------------------------
@pytest.fixture(scope="module")
def api():
    return server.make_app().server.test_client()


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8050", "127.0.0.1.evil.example", "10.0.0.1"])
def test_only_loopback_host_headers_are_served(api, host):
    """DNS rebinding: a page on another name that resolves to 127.0.0.1 sends its own Host."""
    for method, path in (("get", "/"), ("post", "/api/run"), ("post", "/api/cancel")):
        reply = getattr(api, method)(path, json={"signatures": 1000, "data_mb": 1}, headers={"Host": host})
        assert reply.status_code == 403 and "is not served" in reply.json["message"], (method, path)
    for good in ("127.0.0.1:8050", "localhost", "LOCALHOST:1", "[::1]:8050"):
        assert server.host_allowed(good)


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data"])
def test_cross_site_bodies_are_refused(api, content_type):
    """A form or text/plain POST from another site needs no CORS preflight: only JSON runs."""
    reply = api.post("/api/run", data='{"signatures": 1000, "data_mb": 1}', content_type=content_type)
    assert reply.status_code == 415 and "application/json" in reply.json["message"]


@pytest.mark.parametrize("body,field", [
    ("not json", "not JSON"), ("", "not JSON"), ("[1,2,3]", "JSON object"), ('{"seed": -1}', "seed"),
    ('{"seed": 1e400}', "seed"), ('{"seed": 18446744073709551616}', "seed"), ('{"hit_rate": NaN}', "hit_rate"),
    ('{"backend": 7}', "backend"), ('{"rotating": "no"}', "rotating"), ('{"data_mb": [1]}', "data_mb"),
])
def test_every_bad_body_is_a_400_naming_the_field(api, body, field):
    reply = api.post("/api/run", data=body, content_type="application/json")
    assert reply.status_code == 400 and field in reply.json["message"], reply.json


def test_cuda_without_a_gpu_is_a_400(api, monkeypatch):
    monkeypatch.setattr("seqsift.backend.cuda_status", lambda: (False, "no CUDA driver (libcuda) was found"))
    reply = api.post("/api/run", json={"backend": "cuda", "signatures": 1000, "data_mb": 1})
    assert reply.status_code == 400 and "backend='cuda'" in reply.json["message"]


def test_a_body_past_the_limit_is_refused(api):
    reply = api.post("/api/run", data="{" + " " * server.MAX_BODY + "}", content_type="application/json")
    assert reply.status_code == 413


@pytest.mark.parametrize("phase", ["data made", "scanning"])
def test_cancel_stops_the_experiment_at_the_next_step(monkeypatch, phase):
    """Cancel is looked at after each phase and before each 1 MiB object is handed to the scanner,
    not only once the data is all scanned: no object is read after it is asked."""
    from seqsift.lab import experiment

    cancel = threading.Event()
    handed = []
    real_synthetic = experiment.synthetic

    def synthetic(settings):
        made = real_synthetic(settings)
        if phase == "data made":
            cancel.set()
        return made

    scan_api = importlib.import_module("seqsift.scan.api")  # seqsift.scan is also the scan function
    real_objects = scan_api.objects_of

    def objects_of(objects, *args):
        for obj in real_objects(objects, *args):
            handed.append(obj.index)
            if phase == "scanning" and len(handed) == 3:
                cancel.set()
            yield obj

    monkeypatch.setattr(experiment, "synthetic", synthetic)
    monkeypatch.setattr(scan_api, "objects_of", objects_of)
    with pytest.raises(Cancelled, match="cancelled"):
        run(Settings(signatures=1000, data_mb=16, buffer_mb=1), cancel)
    assert handed == ([] if phase == "data made" else [0, 1, 2])  # the cancel came with the 3rd: refused


def test_cancel_stops_the_buffer_in_flight(monkeypatch):
    """Issue 30: a cancel asked while a buffer is being scanned stops that buffer at the engine's
    next kernel call (every POLL_BYTES filtered), not once the buffer is done: one 16 MiB buffer,
    cancelled during its first 1 MiB of filtering, is filtered no further."""
    from seqsift.scan import engine as scan_engine

    monkeypatch.setattr(scan_engine, "POLL_BYTES", 1 << 20)
    cancel = threading.Event()
    covered = []
    real_filter = scan_engine.kernels.table_filter

    def table_filter(data, lo, hi, *rest):
        covered.append(hi - lo)
        cancel.set()  # asked while the first call runs
        return real_filter(data, lo, hi, *rest)

    monkeypatch.setattr(scan_engine.kernels, "table_filter", table_filter)
    with pytest.raises(Cancelled, match="cancelled"):
        run(Settings(signatures=1000, data_mb=16, buffer_mb=16, threads=1), cancel)
    assert covered and sum(covered) <= 1 << 20
