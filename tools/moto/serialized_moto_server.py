#!/usr/bin/env python3
"""moto_server, one request at a time.

moto's server keeps its data in plain Python objects with no lock, so two
concurrent conditional writes can both pass their condition and one update is
lost (16 callers x 25 conditional decrements on a stock of 100 gave 103-108
successes). This launcher puts a lock around moto's WSGI app: requests are
still accepted concurrently (threaded server, HTTP keep-alive), but handled
one after another, as DynamoDB's item-level serialization would.

It also removes two costs of moto that grow with the table and that DynamoDB
does not have (see install_fast_paths); --plain keeps moto's own code paths.

Usage: serialized_moto_server.py [--host 127.0.0.1] [--port 5000] [--plain]
With --port 0 a free port is chosen. Once listening, the launcher prints one
line to stdout, "moto listening on http://HOST:PORT", which callers wait for.
"""
import argparse
import copy
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


def install_fast_paths():
    """Makes a transaction and a Query cost what they touch, not what the table holds.

    moto 5 copies every table a TransactWriteItems names (copy.deepcopy, for its rollback), and each
    Query sorts every item of the table before it picks the partition: both grow with the table, so a
    benchmark's latency would climb as its own orders fill the table. Here a transaction saves only
    the items it names and puts them back when moto cancels it; a Query on the table reads only its
    partition; a Query on an index walks the items unsorted (moto sorts the matches itself). Same
    results, checked by the tests that run against this launcher. Tables with streams are not
    handled (a rollback would not retract stream records); ours have none.
    """
    import moto.dynamodb.models as backend_module
    from moto.dynamodb.models import DynamoDBBackend
    from moto.dynamodb.models.dynamo_type import DynamoType
    from moto.dynamodb.models.table import Table

    class _KeepTables:
        """Stands in for the copy module inside moto's backend: tables are not copied."""

        @staticmethod
        def deepcopy(value, memo=None):
            return value if isinstance(value, Table) else copy.deepcopy(value, memo)

    def key_of(table, op_type, op):
        attrs = op.get("Item") if op_type == "Put" else op.get("Key")
        if not isinstance(attrs, dict) or table.hash_key_attr not in attrs:
            return None
        if table.range_key_attr is None:
            return DynamoType(attrs[table.hash_key_attr]), None
        if table.range_key_attr not in attrs:
            return None
        return DynamoType(attrs[table.hash_key_attr]), DynamoType(attrs[table.range_key_attr])

    def restore(table, hash_key, range_key, item):
        if range_key is None:
            if item is None:
                table.items.pop(hash_key, None)
            else:
                table.items[hash_key] = item
        elif item is None:
            table.items.get(hash_key, {}).pop(range_key, None)
        else:
            table.items[hash_key][range_key] = item

    original_transact = DynamoDBBackend.transact_write_items

    def transact_write_items(self, transact_items):
        saved = []
        for entry in transact_items:
            if not isinstance(entry, dict) or len(entry) != 1:
                continue  # moto rejects it before writing anything
            op_type, op = next(iter(entry.items()))
            table = self.tables.get(op.get("TableName")) if isinstance(op, dict) else None
            key = key_of(table, op_type, op) if table is not None else None
            if key is not None:
                saved.append((table, *key, copy.deepcopy(table.get_item(*key))))
        backend_module.copy = _KeepTables
        try:
            return original_transact(self, transact_items)
        except BaseException:
            # Newest first: a key named twice is put back to what it was before the first write.
            for table, hash_key, range_key, item in reversed(saved):
                restore(table, hash_key, range_key, item)
            raise
        finally:
            backend_module.copy = copy

    original_query = Table.query

    def query(self, hash_key, *args, **kwargs):
        index_name = args[6] if len(args) > 6 else kwargs.get("index_name")
        if index_name:
            items = self.items
            self.all_items = lambda: [i for part in items.values()
                                      for i in (part.values() if isinstance(part, dict) else (part,))]
        elif hash_key is not None and self.range_key_attr is not None:
            partition = self.items.get(hash_key, {})
            self.all_items = lambda: list(partition.values())
        else:
            return original_query(self, hash_key, *args, **kwargs)
        try:
            return original_query(self, hash_key, *args, **kwargs)
        finally:
            del self.all_items  # the instance attribute only shadowed the method for this call

    DynamoDBBackend.transact_write_items = transact_write_items
    Table.query = query


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-H", "--host", default="127.0.0.1")
    parser.add_argument("-p", "--port", type=int, default=5000)
    parser.add_argument("--plain", action="store_true", help="keep moto's own transaction and query paths")
    args = parser.parse_args(argv)

    if not args.plain:
        install_fast_paths()

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
