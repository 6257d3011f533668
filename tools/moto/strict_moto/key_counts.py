"""--count-keys: which partitions the requests went to, per table, as Contributor Insights shows DynamoDB's."""
import json
import threading
from urllib.parse import unquote

from strict_moto.items import batch_items, locate, transaction_items
from strict_moto.wsgi import respond_json


class KeyCounts:
    """Requests per partition key, per table and kind ("reads", "writes"); guarded by its own lock."""

    def __init__(self):
        self._lock = threading.Lock()
        self._counts = {}

    def add(self, table_name, kind, partition):
        if not isinstance(table_name, str) or partition is None:
            return
        value = partition.value if hasattr(partition, "value") else partition
        if not isinstance(value, str):
            value = json.dumps(value, sort_keys=True)
        with self._lock:
            per_kind = self._counts.setdefault(table_name, {"reads": {}, "writes": {}})[kind]
            per_kind[value] = per_kind.get(value, 0) + 1

    def of(self, table_name):
        with self._lock:
            counts = self._counts.get(table_name, {"reads": {}, "writes": {}})
            return {kind: dict(keys) for kind, keys in counts.items()}

    def reset(self, table_name):
        with self._lock:
            self._counts.pop(table_name, None)


def install_key_counts(patches, counts):
    """Counts each request's partition keys in moto's handlers, where the tables' key schemas are known."""
    from moto.dynamodb.models.table import Table
    from moto.dynamodb.responses import DynamoHandler

    def partition(backend, table_name, attrs):
        _, key = locate(backend, table_name, attrs)
        return key[0] if key is not None else None

    def counting(kind, keys):
        def wrapper(original):
            def handler(self):
                try:
                    for table_name, attrs in keys(self.body):
                        counts.add(table_name, kind, partition(self.dynamodb_backend, table_name, attrs))
                except Exception:  # a malformed request: moto says what is wrong with it
                    pass
                return original(self)
            return handler
        return wrapper

    def written_in_transaction(body):
        return [(name, attrs) for op_type, name, attrs in transaction_items(body) if op_type != "ConditionCheck"]

    def one(attribute):
        return lambda body: [(body.get("TableName"), body.get(attribute))]

    def query(original):
        def counted(self, hash_key, *args, **kwargs):
            counts.add(self.name, "reads", hash_key)  # on an index, the index's partition value
            return original(self, hash_key, *args, **kwargs)
        return counted

    patches.wrap(DynamoHandler, "get_item", counting("reads", one("Key")))
    patches.wrap(DynamoHandler, "put_item", counting("writes", one("Item")))
    patches.wrap(DynamoHandler, "update_item", counting("writes", one("Key")))
    patches.wrap(DynamoHandler, "delete_item", counting("writes", one("Key")))
    patches.wrap(DynamoHandler, "batch_write_item", counting("writes", batch_items))
    patches.wrap(DynamoHandler, "transact_write_items", counting("writes", written_in_transaction))
    patches.wrap(Table, "query", query)


class KeyCountsEndpoint:
    """WSGI middleware that answers /_keys/tables/NAME itself (GET the counts, DELETE to reset)."""

    PREFIX = "/_keys/tables/"

    def __init__(self, app, counts):
        self._app = app
        self._counts = counts

    def __call__(self, environ, start_response):
        path = environ.get("PATH_INFO", "")
        if not path.startswith("/_keys"):
            return self._app(environ, start_response)
        if self._counts is None:
            return respond_json(start_response, 404, {"message": "start the launcher with --count-keys"})
        if not path.startswith(self.PREFIX) or len(path) == len(self.PREFIX):
            return respond_json(start_response, 404, {"message": "try /_keys/tables/{TableName}"})
        table_name = unquote(path[len(self.PREFIX):])
        method = environ.get("REQUEST_METHOD", "GET")
        if method == "DELETE":
            self._counts.reset(table_name)
        elif method != "GET":
            return respond_json(start_response, 405, {"message": "GET or DELETE"})
        return respond_json(start_response, 200, self._counts.of(table_name))
