"""`seqsift lab`: serve the Filter Lab on this machine only (127.0.0.1, with waitress) and open it in a browser."""

from __future__ import annotations

import argparse
import importlib.util
import socket
import threading
import webbrowser


def add_parser(sub, parent: argparse.ArgumentParser) -> None:
    from seqsift.options import port_number

    p = sub.add_parser("lab", parents=[parent],
                       description="Serves a local web page (127.0.0.1 only) that runs real scans on synthetic "
                       "data with a chosen hit rate, buffer size and thresholds, and plots what each stage costs.")
    p.add_argument("--port", type=port_number, default=8050, help="port on 127.0.0.1 (default: %(default)s)")
    p.add_argument("--no-browser", action="store_true", help="do not open a browser")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from seqsift.options import EXIT_OK, warn
    from seqsift.errors import UsageError

    try:
        from seqsift.lab.server import make_app, warm_up, wsgi_server
        app = make_app()
        if importlib.util.find_spec("waitress") is None:  # checked before the port and the warm-up
            raise ImportError("No module named 'waitress'")
    except ImportError as exc:
        raise UsageError(f"the Lab needs Dash and waitress ({exc}): pip install 'seqsift[lab]'") from None
    with socket.socket() as probe:  # a clear error (exit 2) rather than the server's own exit 1
        try:
            probe.bind(("127.0.0.1", args.port))
        except OSError as exc:
            raise UsageError(f"--port {args.port}: 127.0.0.1:{args.port} is not free ({exc.strerror}); "
                             "give another port") from None
    url = f"http://127.0.0.1:{args.port}/"
    warm_up()
    httpd = wsgi_server(app, args.port)
    warn(args, f"serving the Filter Lab at {url} (Ctrl-C to stop)")
    if not args.no_browser:
        threading.Timer(1.0, webbrowser.open, (url,)).start()
    # waitress's loop runs in a thread of its own: Ctrl-C, SIGTERM and SIGHUP raise in this thread
    # (cli.py), outside waitress, whose handlers would otherwise catch them while a request is
    # being answered and go on serving.
    serving = threading.Thread(target=httpd.run, name="seqsift-lab", daemon=True)
    serving.start()
    try:
        while serving.is_alive():
            serving.join(0.5)
    finally:
        httpd.close()
    return EXIT_OK
