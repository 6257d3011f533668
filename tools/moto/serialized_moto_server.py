#!/usr/bin/env python3
"""moto_server, one request at a time.

moto's server keeps its data in plain Python objects with no lock, so two
concurrent conditional writes can both pass their condition and one update is
lost (16 callers x 25 conditional decrements on a stock of 100 gave 103-108
successes). This launcher puts a lock around moto's WSGI app: requests are
still accepted concurrently (threaded server, HTTP keep-alive), but handled
one after another, as DynamoDB's item-level serialization would.

Usage: serialized_moto_server.py [--host 127.0.0.1] [--port 5000]
With --port 0 a free port is chosen. Once listening, the launcher prints one
line to stdout, "moto listening on http://HOST:PORT", which callers wait for.
"""
import argparse
import logging
import signal
import sys
import threading

try:
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
    from werkzeug.serving import make_server
except ImportError as missing:  # pragma: no cover - depends on the machine
    sys.stderr.write(
        f"moto is not installed for {sys.executable} ({missing}).\n"
        "Install it with: pip install 'moto[server]'\n")
    sys.exit(3)


class SerializedApp:
    """WSGI middleware that lets one request at a time into the wrapped app."""

    def __init__(self, app):
        self._app = app
        self._lock = threading.Lock()

    def __call__(self, environ, start_response):
        with self._lock:
            result = self._app(environ, start_response)
            try:
                # Drain the body inside the lock: an app may do its work lazily while it is iterated.
                return [bytes(chunk) for chunk in result]
            finally:
                close = getattr(result, "close", None)
                if close is not None:
                    close()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-H", "--host", default="127.0.0.1")
    parser.add_argument("-p", "--port", type=int, default=5000)
    args = parser.parse_args(argv)

    # One log line per request would cost more than the request; errors still show.
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    app = SerializedApp(DomainDispatcherApplication(create_backend_app))
    server = make_server(args.host, args.port, app, threaded=True)
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
    signal.signal(signal.SIGINT, lambda *_: threading.Thread(target=server.shutdown).start())
    print(f"moto listening on http://{args.host}:{server.server_port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
