"""The launcher put together: moto's WSGI app behind the middlewares, its methods patched; and served."""
import logging
import random
import signal
import threading
import time

from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
from werkzeug.serving import make_server

from strict_moto.capacity import install_consumed_capacity
from strict_moto.conflicts import Conflicts, install_conflicts
from strict_moto.consistency import Consistency, install_consistency
from strict_moto.fast_paths import install_fast_paths
from strict_moto.key_counts import KeyCounts, KeyCountsEndpoint, install_key_counts
from strict_moto.patches import Patches
from strict_moto.serialized import BodyFirst, SerializedApp
from strict_moto.settings import Settings, SettingsEndpoint
from strict_moto.throughput import Throughput, install_query_throughput, install_throughput
from strict_moto.tokens import StrictTransactions, Tokens


def build_app(defaults, plain=False, lenient=False, count_keys=False,
              clock=time.monotonic, sleep=time.sleep, rng=None):
    """The launcher's WSGI app, and the Patches it made to moto (the tests undo them).

    `defaults` are the strict mode's settings (settings.Settings.RANGES); `clock` (monotonic seconds),
    `sleep` and `rng` are what the strict mode waits and draws with.
    """
    patches = Patches()
    if not plain:
        install_fast_paths(patches)
    settings = Settings(defaults)
    throughput = None if lenient else Throughput(settings, clock)
    if throughput is not None:
        install_query_throughput(patches, throughput)  # inside the billing: it sees what a Query read, unfiltered
    install_consumed_capacity(patches)  # before the strict wrappers: a stale read is billed for what it served
    app = SerializedApp(DomainDispatcherApplication(create_backend_app))
    if not lenient:
        rng = rng or random.Random()
        install_consistency(patches, Consistency(settings, clock, rng))
        install_conflicts(patches, Conflicts(settings, rng))
        install_throughput(patches, throughput)  # outside the rest: a throttled request does nothing
        app = StrictTransactions(app, settings, Tokens(), clock, sleep)
    counts = KeyCounts() if count_keys else None
    if counts is not None:
        install_key_counts(patches, counts)
    return BodyFirst(KeyCountsEndpoint(SettingsEndpoint(app, settings, strict=not lenient), counts)), patches


def serve(app, host, port):
    """Serves `app` until SIGTERM or SIGINT, on `port` (0: a free one), once listening printing the line callers wait for."""
    # One log line per request would cost more than the request; errors still show.
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    server = make_server(host, port, app, threaded=True)
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
    signal.signal(signal.SIGINT, lambda *_: threading.Thread(target=server.shutdown).start())
    print(f"moto listening on http://{host}:{server.server_port}", flush=True)
    server.serve_forever()
