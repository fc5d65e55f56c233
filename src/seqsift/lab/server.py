"""The Filter Lab's web page and JSON API (Dash: Flask underneath, Plotly charts, every asset served
from the installed packages, so it works offline), served by waitress, a production WSGI server, not
Flask's development server. One experiment runs at a time; a second request while one runs is
refused with a message (HTTP 409 on the API)."""

from __future__ import annotations

import json
import threading
from dataclasses import fields

from seqsift.errors import UsageError
from seqsift.lab.experiment import LIMITS, Cancelled, Settings, run

SWEEP = (0.0, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5)
MAX_BODY = 64 << 10  # a request body past it is refused (HTTP 413)
LOCAL_HOSTS = ("127.0.0.1", "localhost", "[::1]")  # Host headers served: a page on another name (DNS rebinding) is refused
_busy = threading.Lock()
_cancel = threading.Event()


def run_one(settings: Settings) -> dict:
    """Run an experiment unless one is running: {"error": ...} when busy, cancelled or refused."""
    if not _busy.acquire(blocking=False):
        return {"error": "busy", "message": "An experiment is already running: wait for it, or cancel it."}
    try:
        _cancel.clear()
        return run(settings, _cancel)
    except (UsageError, Cancelled) as exc:
        return {"error": type(exc).__name__, "message": str(exc)}
    finally:
        _busy.release()


def warm_up() -> None:
    """One tiny experiment, so the first one a user runs does not pay for loading the kernels."""
    run(Settings(signatures=LIMITS["signatures"][0], data_mb=1, buffer_mb=1))


def host_allowed(host: str | None) -> bool:
    """Whether a Host header names this machine's loopback (with any port)."""
    if not host:
        return False
    name = host.lower()
    if name.startswith("["):  # [::1] or [::1]:port
        name = name[: name.find("]") + 1]
    elif name.count(":") == 1:
        name = name.split(":")[0]
    return name in LOCAL_HOSTS


def settings_from(values) -> Settings:
    """Settings from JSON or form values; unknown names and wrong types are a UsageError."""
    if not isinstance(values, dict):
        raise UsageError(f"the body must be a JSON object of settings, not {type(values).__name__}")
    known = {f.name: f for f in fields(Settings)}
    out = {}
    for name, value in values.items():
        if name not in known:
            raise UsageError(f"unknown setting {name!r}: use {', '.join(known)}")
        if value in (None, "") and name in ("block_threshold", "object_threshold"):
            out[name] = None
            continue
        kind = type(getattr(Settings(), name))
        if kind is str and not isinstance(value, str) or kind is bool and not isinstance(value, bool):
            raise UsageError(f"{name}={value!r}: give a {kind.__name__}")
        try:
            out[name] = value if isinstance(value, bool) or kind is str else (float(value) if name == "hit_rate" else int(value))
        except (TypeError, ValueError, OverflowError):  # OverflowError: int(1e400), JSON's infinity
            raise UsageError(f"{name}={value!r} is not a number in range") from None
    return Settings(**out).check()


def wsgi_server(app, port: int):
    """A waitress server for the Lab's Flask app on 127.0.0.1:port (call .run(), then .close()).
    Every request check stays in the app (Host allow-list, JSON-only POSTs, body limit); waitress
    also refuses a body past MAX_BODY itself, chunked ones included, before the app reads it. Four
    threads: a Cancel or a page load is answered while an experiment runs in another."""
    from waitress import create_server

    return create_server(app.server, host="127.0.0.1", port=port, threads=4, max_request_body_size=MAX_BODY,
                         ident="seqsift")


def make_app():
    import dash
    import plotly.graph_objects as go
    from dash import Input, Output, State, dcc, html
    from flask import jsonify, request

    from seqsift import backend as backends

    app = dash.Dash(__name__, title="seqsift Filter Lab", serve_locally=True)
    server = app.server
    server.config["MAX_CONTENT_LENGTH"] = MAX_BODY

    @server.before_request
    def local_json_only():
        """Only requests to this machine's own name (a rebound DNS name is refused) and, for POST,
        only application/json bodies (a cross-site form or text/plain POST needs no preflight)."""
        if not host_allowed(request.host):
            return jsonify({"error": "Forbidden", "message": f"Host {request.host!r} is not served: "
                            "open the Lab at http://127.0.0.1 or http://localhost"}), 403
        if request.method == "POST" and request.mimetype != "application/json":
            return jsonify({"error": "UnsupportedMediaType",
                            "message": "POST bodies must be application/json"}), 415
        if (request.content_length or 0) > MAX_BODY:
            return jsonify({"error": "TooLarge", "message": f"the body is over {MAX_BODY} bytes"}), 413
        return None

    @server.post("/api/run")
    def api_run():
        body = request.get_data(cache=True)
        if len(body) > MAX_BODY:
            return jsonify({"error": "TooLarge", "message": f"the body is over {MAX_BODY} bytes"}), 413
        try:
            values = json.loads(body)
        except ValueError as exc:
            return jsonify({"error": "UsageError", "message": f"the body is not JSON ({exc})"}), 400
        try:
            settings = settings_from(values)
        except UsageError as exc:
            return jsonify({"error": "UsageError", "message": str(exc)}), 400
        result = run_one(settings)
        status = 409 if result.get("error") == "busy" else 400 if "error" in result else 200
        return jsonify(result), status

    @server.post("/api/cancel")
    def api_cancel():
        _cancel.set()
        return jsonify({"cancelled": _busy.locked()})

    backends_ok = ["cpu"] + (["cuda"] if backends.cuda_status()[0] else [])
    number = lambda id_, value, lo, hi, step=1: dcc.Input(id=id_, type="number", value=value, min=lo, max=hi, step=step,  # noqa: E731
                                                          debounce=True, style={"width": "8em"})
    app.layout = html.Div(style={"fontFamily": "sans-serif", "maxWidth": "980px", "margin": "auto"}, children=[
        html.H2("seqsift Filter Lab"),
        html.P("The GPU virus filter pipeline of GPU Gems 3, ch. 35, run for real by seqsift's scanner: "
               "a 2-byte key + 4-byte tag table filters every position, candidates are verified in full on "
               "the CPU. Raise the hit rate and watch candidates and checks eat the throughput; raise the "
               "signatures past 65,536 and a table of one entry per key overflows."),
        html.Div(style={"display": "grid", "gridTemplateColumns": "repeat(3, 1fr)", "gap": "8px"}, children=[
            html.Label(["Signatures ", number("signatures", 30_000, *LIMITS["signatures"], 1000)]),
            html.Label(["Buffer MB ", number("buffer_mb", 8, *LIMITS["buffer_mb"])]),
            html.Label(["Data MB ", number("data_mb", 64, *LIMITS["data_mb"])]),
            html.Label(["Hit rate % ", dcc.Slider(id="hit_rate", min=0, max=50, step=1, value=0,
                                                   marks={k: f"{k}%" for k in (0, 10, 20, 30, 40, 50)})]),
            html.Label(["Block threshold ", number("block_threshold", None, 0, None)]),
            html.Label(["Object threshold ", number("object_threshold", None, 0, None)]),
            dcc.Checklist(id="switches", value=["rotating", "verify"],
                          options=[{"label": " rotating buffers", "value": "rotating"},
                                   {"label": " full verification", "value": "verify"}]),
            html.Label(["Backend ", dcc.Dropdown(id="backend", options=backends_ok, value="cpu", clearable=False)]),
            html.Label(["Threads ", number("threads", 1, *LIMITS["threads"])]),
        ]),
        html.Div(style={"margin": "12px 0"}, children=[
            html.Button("Run", id="run", n_clicks=0), " ",
            html.Button("Sweep hit rate 0-50%", id="sweep", n_clicks=0), " ",
            html.Button("Cancel", id="cancel", n_clicks=0),
        ]),
        html.Div(id="status", children="Ready."),
        html.Div(id="overflow", style={"fontWeight": "bold", "margin": "8px 0"}),
        dcc.Graph(id="throughput", figure=placeholder_figure(go, "Throughput against hit rate")),
        dcc.Graph(id="stages", figure=placeholder_figure(go, "Time per stage, per buffer")),
        dcc.Store(id="history", data=[]),
    ])

    def settings_of(values) -> Settings:
        (signatures, buffer_mb, data_mb, hit, block, obj, switches, backend, threads) = values
        return settings_from({"signatures": signatures, "buffer_mb": buffer_mb, "data_mb": data_mb,
                              "hit_rate": (hit or 0) / 100, "block_threshold": block, "object_threshold": obj,
                              "rotating": "rotating" in (switches or []), "verify": "verify" in (switches or []),
                              "backend": backend, "threads": threads})

    controls = [State("signatures", "value"), State("buffer_mb", "value"), State("data_mb", "value"),
                State("hit_rate", "value"), State("block_threshold", "value"), State("object_threshold", "value"),
                State("switches", "value"), State("backend", "value"), State("threads", "value")]

    @app.callback(Output("status", "children"), Output("overflow", "children"), Output("throughput", "figure"),
                  Output("stages", "figure"), Output("history", "data"),
                  Input("run", "n_clicks"), Input("sweep", "n_clicks"), State("history", "data"), *controls,
                  prevent_initial_call=True)
    def on_run(_run, _sweep, history, *values):
        try:
            base = settings_of(values)
        except UsageError as exc:
            return f"Not run: {exc}", dash.no_update, dash.no_update, dash.no_update, dash.no_update
        sweep = dash.ctx.triggered_id == "sweep"
        rates = SWEEP if sweep else (base.hit_rate,)
        results = []
        for rate in rates:
            result = run_one(Settings(**{**base.__dict__, "hit_rate": rate}))
            if "error" in result:
                return result["message"], dash.no_update, dash.no_update, dash.no_update, dash.no_update
            results.append(result)
        history = ([] if sweep else list(history or [])) + [
            {"hit": r["settings"]["hit_rate"] * 100, "mbps": r["throughput_mbps"]} for r in results]
        last = results[-1]
        return (_status(last), _overflow(last["table"]), _throughput_figure(go, history, sweep),
                _stage_figure(go, last), history)

    @app.callback(Output("cancel", "n_clicks"), Input("cancel", "n_clicks"), prevent_initial_call=True)
    def on_cancel(n):
        _cancel.set()
        return n

    return app


def _status(r: dict) -> str:
    return (f"{r['bytes'] / 1e6:.0f} MB at {r['settings']['hit_rate'] * 100:.0f}% hits: {r['throughput_mbps']:.0f} MB/s; "
            f"{r['candidates']:,} candidates, {r['confirmed']:,} hits reported; {r['buffers']} buffers; "
            f"{r['block_fallbacks']} buffers and {r['object_fallbacks']} objects sent to the full CPU pass.")


def _overflow(table: dict) -> str:
    if table["one_per_key_lost"]:
        return (f"Table overflow: a one-signature-per-key table would lose {table['one_per_key_lost']:,} of "
                f"{table['entries']:,} signatures; the bucket table holds them all (largest bucket {table['largest_bucket']}).")
    return f"No overflow: {table['entries']:,} signatures on {table['keys_used']:,} keys, largest bucket {table['largest_bucket']}."


def placeholder_figure(go, title: str):
    """What a chart shows before the first run: its title and a note to press Run, no empty axes."""
    fig = go.Figure()
    fig.update_layout(title=title, height=300, xaxis={"visible": False}, yaxis={"visible": False},
                      annotations=[{"text": "press Run to measure", "showarrow": False, "font": {"size": 18},
                                    "xref": "paper", "yref": "paper", "x": 0.5, "y": 0.5}])
    return fig


def _throughput_figure(go, history: list, sweep: bool):
    points = sorted(history, key=lambda h: h["hit"])
    fig = go.Figure(go.Scatter(x=[p["hit"] for p in points], y=[p["mbps"] for p in points], mode="lines+markers",
                               name="throughput"))
    fig.update_layout(title="Throughput against hit rate" + (" (sweep)" if sweep else ""),
                      xaxis_title="hit rate (% of 64-byte slots)", yaxis_title="MB/s", height=320)
    return fig


def _stage_figure(go, r: dict):
    stages = r["stage_ms_per_buffer"]
    fig = go.Figure(go.Bar(x=list(stages), y=list(stages.values())))
    fig.update_layout(title="Time per stage, per buffer (last run)", yaxis_title="ms", height=300)
    return fig
