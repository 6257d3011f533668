#!/usr/bin/env python3
"""moto_server, one request at a time, and as strict as DynamoDB's documentation.

moto's server keeps its data in plain Python objects with no lock, so two
concurrent conditional writes can both pass their condition and one update is
lost (16 callers x 25 conditional decrements on a stock of 100 gave 103-108
successes). This launcher puts a lock around moto's WSGI app: requests are
still accepted concurrently (threaded server), but handled one after another,
as DynamoDB's item-level serialization would. Each request's body is read in
full before the lock is taken, so a client slow to send its body stalls only
itself.

It also removes two costs of moto that grow with the table and that DynamoDB
does not have (see install_fast_paths); --plain keeps moto's own code paths.

In every mode, the ConsumedCapacity of an answer (when ReturnConsumedCapacity
asks for it) is the one DynamoDB documents, from the sizes of the items read
and written, not moto's flat 0.5 or 1 per request (see
install_consumed_capacity): the benchmark measures capacity per call against
the lenient mode, and a figure is not a kindness to switch off.

moto is kinder than DynamoDB. Unless started with --lenient, the launcher
models what DynamoDB documents and moto leaves out:

- ClientRequestToken on TransactWriteItems. A token that committed is kept for
  a window (--token-window-seconds, 600 as in DynamoDB) after its request
  completed: the same token with the same parameters answers {} without
  writing again; with other parameters, IdempotentParameterMismatchException;
  while the first request is still running, TransactionInProgressException.
  A cancelled transaction records nothing. --transaction-latency-ms makes each
  transaction wait that long, its token already in flight, before it applies.
- Eventual consistency. A GetItem or Query without ConsistentRead, and every
  Query on a global secondary index, is served, with probability
  --stale-read-probability (1.0), from the table as it was
  --consistency-lag-ms (200) ago: an item written since shows its older
  version, or is absent if it was just created, or present if just deleted.
- Contention. With probability --conflict-rate (0), a TransactWriteItems is
  cancelled with one TransactionConflict reason (the others None), as
  DynamoDB does when another transaction holds one of its items.

With --count-keys the launcher also counts, per table, the requests each
partition key received, as CloudWatch Contributor Insights shows DynamoDB's
most accessed keys: reads (GetItem, each Query) and writes (PutItem,
UpdateItem, DeleteItem, each item of a BatchWriteItem or TransactWriteItems
but its ConditionChecks), attempts included whether their condition held or
not. GET /_keys/tables/NAME answers {"reads": {PK: n}, "writes": {PK: n}};
DELETE resets them. Counts grow with the keys seen: a benchmark's tool.

The same settings can be changed per table at run time, so that test classes
sharing one server keep apart: POST /_strict/tables/NAME with a JSON object of
any of stale_read_probability, consistency_lag_ms, conflict_rate,
token_window_ms, transaction_latency_ms overrides the defaults for that table
(it need not exist yet); DELETE /_strict/tables/NAME resets it; GET shows what
applies; GET /_strict tells whether the launcher is strict. With --lenient
these endpoints answer but change nothing.

Usage: serialized_moto_server.py [--host 127.0.0.1] [--port 5000] [--plain]
    [--lenient] [--token-window-seconds 600] [--transaction-latency-ms 0]
    [--stale-read-probability 1.0] [--consistency-lag-ms 200] [--conflict-rate 0]
    [--count-keys]
With --port 0 a free port is chosen. Once listening, the launcher prints one
line to stdout, "moto listening on http://HOST:PORT", which callers wait for.
"""
import argparse
import base64
import copy
import hashlib
import heapq
import io
import json
import logging
import math
import random
import signal
import sys
import threading
import time
import uuid
import zlib
from collections import deque
from urllib.parse import unquote

try:
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
    from werkzeug.serving import make_server
except ImportError as missing:  # pragma: no cover - depends on the machine
    sys.stderr.write(
        f"moto is not installed for {sys.executable} ({missing}).\n"
        "./test.sh and ./run.sh install the pinned version (tools/python-requirements.txt).\n")
    sys.exit(3)

ERROR_TYPE_PREFIX = "com.amazonaws.dynamodb.v20120810#"
DYNAMODB_JSON = "application/x-amz-json-1.0"
STATUS_LINES = {200: "200 OK", 400: "400 Bad Request", 404: "404 Not Found", 405: "405 Method Not Allowed"}
TRANSACTION_OPERATIONS = ("ConditionCheck", "Put", "Delete", "Update")


def read_body(environ):
    """The whole request body, or None when the client closed the connection before sending it all."""
    stream = environ["wsgi.input"]
    length = environ.get("CONTENT_LENGTH")
    if length:
        remaining = int(length)
        chunks = []
        while remaining > 0:
            chunk = stream.read(remaining)
            if not chunk:
                return None
            chunks.append(chunk)
            remaining -= len(chunk)
        return b"".join(chunks)
    if environ.get("wsgi.input_terminated"):  # chunked: the server's reader ends at the last chunk
        return stream.read()
    return b""


def respond(start_response, status, payload, content_type=DYNAMODB_JSON):
    body = json.dumps(payload, separators=(",", ":")).encode()
    start_response(STATUS_LINES[status], [
        ("Content-Type", content_type),
        ("Content-Length", str(len(body))),
        ("x-amzn-RequestId", str(uuid.uuid4())),
        ("x-amz-crc32", str(zlib.crc32(body) & 0xFFFFFFFF)),
    ])
    return [body]


def dynamodb_error(start_response, error, message):
    return respond(start_response, 400, {"__type": ERROR_TYPE_PREFIX + error, "message": message})


class BodyFirst:
    """WSGI middleware that reads each request's body in full, then hands the app an in-memory copy.

    Done before the lock below: werkzeug's reader would otherwise block inside it, on a client that
    sent its headers and is slow to send the rest, and every other request would wait.
    """

    def __init__(self, app):
        self._app = app

    def __call__(self, environ, start_response):
        try:
            body = read_body(environ)
        except (OSError, ValueError):
            body = None
        if body is None:
            return respond(start_response, 400, {"message": "incomplete request body"}, "application/json")
        environ["wsgi.input"] = io.BytesIO(body)
        environ["CONTENT_LENGTH"] = str(len(body))
        environ["launcher.body"] = body
        return self._app(environ, start_response)


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


def item_key(table, attrs):
    """The stored key (hash, range or None) of the item `attrs` names in `table`, or None if it names none."""
    from moto.dynamodb.models.dynamo_type import DynamoType

    if not isinstance(attrs, dict) or table.hash_key_attr not in attrs:
        return None
    if table.range_key_attr is None:
        return DynamoType(attrs[table.hash_key_attr]), None
    if table.range_key_attr not in attrs:
        return None
    return DynamoType(attrs[table.hash_key_attr]), DynamoType(attrs[table.range_key_attr])


def stored_item(table, key):
    hash_key, range_key = key
    if range_key is None:
        return table.items.get(hash_key)
    partition = table.items.get(hash_key)
    return partition.get(range_key) if partition else None


def put_back(table, hash_key, range_key, item):
    """Makes `item` (None: nothing) the stored item under the key."""
    if range_key is None:
        if item is None:
            table.items.pop(hash_key, None)
        else:
            table.items[hash_key] = item
    elif item is None:
        table.items.get(hash_key, {}).pop(range_key, None)
    else:
        table.items[hash_key][range_key] = item


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
    from moto.dynamodb.models.table import Table

    class _KeepTables:
        """Stands in for the copy module inside moto's backend: tables are not copied."""

        @staticmethod
        def deepcopy(value, memo=None):
            return value if isinstance(value, Table) else copy.deepcopy(value, memo)

    def key_of(table, op_type, op):
        return item_key(table, op.get("Item") if op_type == "Put" else op.get("Key"))

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
                put_back(table, hash_key, range_key, item)
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


# ---------------------------------------------------------------------------------------------------
# Consumed capacity: what DynamoDB's documentation says a request consumes, not moto's flat figures.

READ_UNIT_BYTES = 4096
WRITE_UNIT_BYTES = 1024
_reading = threading.local()  # bytes a Query read, summed by Table.query for the handler around it


def number_size(text):
    """A number's size: 1 byte per two significant digits (leading and trailing zeros trimmed), plus 1."""
    mantissa = str(text).lstrip("+-").lower().partition("e")[0]
    digits = mantissa.replace(".", "").strip("0")
    return (max(len(digits), 1) + 1) // 2 + 1


def binary_size(value):
    if isinstance(value, (bytes, bytearray)):
        return len(value)
    try:
        return len(base64.b64decode(value, validate=True))
    except (ValueError, TypeError):
        return len(str(value).encode("utf-8"))


def value_size(value):
    """The size of one attribute value (a DynamoType or its JSON form), as DynamoDB documents it."""
    if isinstance(value, dict):
        kind, content = next(iter(value.items()))
    else:
        kind, content = value.type, value.value
    if kind == "S":
        return len(content.encode("utf-8"))
    if kind == "N":
        return number_size(content)
    if kind == "B":
        return binary_size(content)
    if kind in ("BOOL", "NULL"):
        return 1
    if kind == "SS":
        return sum(len(s.encode("utf-8")) for s in content)
    if kind == "NS":
        return sum(number_size(n) for n in content)
    if kind == "BS":
        return sum(binary_size(b) for b in content)
    if kind == "L":  # 3 bytes for the list, 1 for each element
        return 3 + sum(1 + value_size(element) for element in content)
    if kind == "M":
        return 3 + sum(1 + len(name.encode("utf-8")) + value_size(element) for name, element in content.items())
    return len(str(content).encode("utf-8"))


def item_size(item):
    """Bytes of an item (a moto Item or None): its attribute names and values."""
    if item is None:
        return 0
    return sum(len(name.encode("utf-8")) + value_size(value) for name, value in item.attrs.items())


def read_units(size, consistent):
    """A read of `size` bytes: 4 KB units (at least one), half for an eventually consistent read."""
    units = max(1, math.ceil(size / READ_UNIT_BYTES))
    return float(units) if consistent else units / 2.0


def write_units(size):
    """A write of `size` bytes: 1 KB units, at least one."""
    return float(max(1, math.ceil(size / WRITE_UNIT_BYTES)))


def index_write_units(table, before, after):
    """{index name: write units} that changing `before` into `after` costs the table's global secondary indexes.

    As DynamoDB documents it: an item entering or leaving an index is one write there; a change of its
    index key is two (delete, then put); a change of a projected attribute only, one; nothing projected
    changed, none. An index entry's size is that of the projected item.
    """
    units = {}
    for index in table.global_indexes or ():
        keys = index.schema_key_attrs
        old = index.project(copy.deepcopy(before)) if before is not None and all(k in before.attrs for k in keys) else None
        new = index.project(copy.deepcopy(after)) if after is not None and all(k in after.attrs for k in keys) else None
        if old is None and new is None:
            continue
        if old is None:
            units[index.name] = write_units(item_size(new))
        elif new is None:
            units[index.name] = write_units(item_size(old))
        elif any(old.attrs[k] != new.attrs[k] for k in keys):
            units[index.name] = write_units(item_size(old)) + write_units(item_size(new))
        elif old.attrs != new.attrs:
            units[index.name] = write_units(max(item_size(old), item_size(new)))
    return units


class Consumed:
    """Capacity a request consumed, per table: read and write units on the table, write units per index."""

    def __init__(self):
        self.tables = {}

    def add(self, table_name, read=0.0, write=0.0, indexes=None):
        entry = self.tables.setdefault(table_name, {"read": 0.0, "write": 0.0, "indexes": {}})
        entry["read"] += read
        entry["write"] += write
        for name, units in (indexes or {}).items():
            entry["indexes"][name] = entry["indexes"].get(name, 0.0) + units

    def entries(self, mode, split):
        """ConsumedCapacity entries as DynamoDB answers them: TOTAL, or INDEXES with the table and each index.

        `split` adds ReadCapacityUnits and WriteCapacityUnits, as DynamoDB does for transactions.
        """
        answer = []
        for table_name, entry in self.tables.items():
            on_table = entry["read"] + entry["write"]
            total = on_table + sum(entry["indexes"].values())
            capacity = {"TableName": table_name, "CapacityUnits": total}
            if split:
                writes = entry["write"] + sum(entry["indexes"].values())
                if entry["read"]:
                    capacity["ReadCapacityUnits"] = entry["read"]
                if writes:
                    capacity["WriteCapacityUnits"] = writes
            if mode == "INDEXES":
                capacity["Table"] = {"CapacityUnits": on_table}
                if entry["indexes"]:
                    capacity["GlobalSecondaryIndexes"] = {
                        name: {"CapacityUnits": units} for name, units in entry["indexes"].items()}
            answer.append(capacity)
        return answer


def install_consumed_capacity():
    """Makes every answer's ConsumedCapacity the one DynamoDB documents, when the request asks for it.

    moto bills flat figures whatever the items' sizes (0.5 per GetItem, 1 per Query or PutItem, 0.5 per
    UpdateItem even unasked, nothing for TransactWriteItems). Here: item sizes from attribute names and
    values; reads in 4 KB units, eventual ones half; a Query rounds up the total size of the items it
    read (before any filter), at least one unit; writes in 1 KB units of the larger of the item before
    and after; transactions double each item's units (a ConditionCheck is a transactional read); writes
    to global secondary indexes are added as DynamoDB adds them to TOTAL. A Scan is billed like a Query.

    Installed before the strict model's wrappers, so that a stale read is billed for the version it
    served.
    """
    from moto.dynamodb.models.table import Table
    from moto.dynamodb.responses import DynamoHandler

    def wanted(body):
        mode = body.get("ReturnConsumedCapacity", "NONE")
        return mode if mode in ("TOTAL", "INDEXES") else None

    def locate(backend, table_name, attrs):
        table = backend.tables.get(table_name) if isinstance(table_name, str) else None
        key = item_key(table, attrs) if table is not None else None
        return (table, key) if key is not None else (None, None)

    def answer(result, mode, consumed, single, split=False):
        body = result.result if hasattr(result, "result") else None
        if not isinstance(body, dict):
            return result
        body.pop("ConsumedCapacityUnits", None)  # moto's DeleteItem adds it; DynamoDB has no such field
        if mode is None or consumed is None:
            body.pop("ConsumedCapacity", None)
        else:
            entries = consumed.entries(mode, split)
            body["ConsumedCapacity"] = entries[0] if single and entries else entries
        return result

    def one_write(original, key_attribute):
        def handler(self):
            mode = wanted(self.body)
            table, key = locate(self.dynamodb_backend, self.body.get("TableName"), self.body.get(key_attribute))
            if mode is None or table is None:
                return answer(original(self), mode, None, True)
            before = copy.deepcopy(stored_item(table, key))  # UpdateItem changes the stored item in place
            result = original(self)
            after = stored_item(table, key)
            consumed = Consumed()
            consumed.add(table.name, write=write_units(max(item_size(before), item_size(after))),
                         indexes=index_write_units(table, before, after))
            return answer(result, mode, consumed, True)
        return handler

    def get_item(original):
        def handler(self):
            mode = wanted(self.body)
            table, key = locate(self.dynamodb_backend, self.body.get("TableName"), self.body.get("Key"))
            if mode is None or table is None:
                return answer(original(self), mode, None, True)
            size = item_size(stored_item(table, key))  # the whole item, whatever the projection
            result = original(self)
            consumed = Consumed()
            consumed.add(table.name, read=read_units(size, self.body.get("ConsistentRead") in (True, "true")))
            return answer(result, mode, consumed, True)
        return handler

    def query(original):
        """A Query's or a Scan's handler: billed on the bytes Table.query or Table.scan read for it."""
        def handler(self):
            mode = wanted(self.body)
            _reading.bytes = 0
            try:
                result = original(self)
                read = _reading.bytes
            finally:
                _reading.bytes = None
            name = self.body.get("TableName")
            if mode is None or name not in self.dynamodb_backend.tables:
                return answer(result, mode, None, True)
            # Reads of a global secondary index are eventually consistent whatever was asked (moto refuses the rest).
            consistent = self.body.get("ConsistentRead") in (True, "true") and not self.body.get("IndexName")
            consumed = Consumed()
            consumed.add(name, read=read_units(read, consistent))
            return answer(result, mode, consumed, True)
        return handler

    def take(args, kwargs, index, name):
        """Removes one argument moto's method takes by position or by name, and returns it."""
        if len(args) > index:
            value, args[index] = args[index], None
            return value
        return kwargs.pop(name, None)

    def billing(original, filter_at, filter_name, projection_at, projection_name):
        """moto's Table.query or Table.scan (first argument, then the rest) without its filter and
        projection, given by position or by name: sums the size of what it read, then applies them."""
        def read(self, first, *args, **kwargs):
            args = list(args)
            filter_expression = take(args, kwargs, filter_at, filter_name)
            projection = take(args, kwargs, projection_at, projection_name)
            results, scanned_count, last_evaluated_key = original(self, first, *args, **kwargs)
            return billed(results, filter_expression, projection, scanned_count, last_evaluated_key)
        return read

    # Table.scan's legacy ScanFilter (its first argument) still applies first, as moto has it.
    table_query = billing(Table.query, 8, "filter_expression", 5, "projection_expressions")
    table_scan = billing(Table.scan, 2, "filter_expression", 5, "projection_expression")

    def billed(results, filter_expression, projection, scanned_count, last_evaluated_key):
        """Counts the bytes of what was read, then filters and projects it as moto would have."""
        if getattr(_reading, "bytes", None) is not None:
            _reading.bytes += sum(item_size(r) for r in results)  # an index's items as projected there
        if filter_expression is not None:
            results = [r for r in results if filter_expression.expr(r)]
        if projection:
            results = [r.project(projection) for r in results]
        return results, scanned_count, last_evaluated_key

    def transact_write_items(original):
        def handler(self):
            mode = wanted(self.body)
            if mode is None:
                return answer(original(self), None, None, False)
            backend = self.dynamodb_backend
            touched = []
            for entry in self.body.get("TransactItems") or ():
                if not isinstance(entry, dict) or len(entry) != 1:
                    continue  # moto rejects it
                op_type, op = next(iter(entry.items()))
                if not isinstance(op, dict):
                    continue
                table, key = locate(backend, op.get("TableName"), op.get("Item") if op_type == "Put" else op.get("Key"))
                if table is not None:
                    touched.append((op_type, table, key, copy.deepcopy(stored_item(table, key))))
            result = original(self)
            consumed = Consumed()
            for op_type, table, key, before in touched:
                if op_type == "ConditionCheck":
                    consumed.add(table.name, read=2 * read_units(item_size(before), True))
                    continue
                after = stored_item(table, key)
                consumed.add(table.name, write=2 * write_units(max(item_size(before), item_size(after))),
                             indexes=index_write_units(table, before, after))
            return answer(result, mode, consumed, False, split=True)
        return handler

    def transact_get_items(original):
        def handler(self):
            mode = wanted(self.body)
            consumed = Consumed()
            for entry in self.body.get("TransactItems") or ():
                op = entry.get("Get") if isinstance(entry, dict) else None
                table, key = locate(self.dynamodb_backend, op.get("TableName"), op.get("Key")) if isinstance(op, dict) else (None, None)
                if table is not None:
                    consumed.add(table.name, read=2 * read_units(item_size(stored_item(table, key)), True))
            return answer(original(self), mode, consumed, False, split=True)
        return handler

    def batch_get_item(original):
        def handler(self):
            mode = wanted(self.body)
            result = original(self)
            body = result.result if hasattr(result, "result") else {}
            unprocessed = body.get("UnprocessedKeys") or {} if isinstance(body, dict) else {}
            consumed = Consumed()
            for table_name, request in (self.body.get("RequestItems") or {}).items():
                if not isinstance(request, dict):
                    continue
                left = [json.dumps(k, sort_keys=True) for k in (unprocessed.get(table_name) or {}).get("Keys", [])]
                consistent = request.get("ConsistentRead") in (True, "true")
                for attrs in request.get("Keys") or ():
                    table, key = locate(self.dynamodb_backend, table_name, attrs)
                    if table is not None and json.dumps(attrs, sort_keys=True) not in left:
                        # Each item rounded to 4 KB on its own, as separate GetItems would be.
                        consumed.add(table_name, read=read_units(item_size(stored_item(table, key)), consistent))
            return answer(result, mode, consumed, False)
        return handler

    def batch_write_item(original):
        def handler(self):
            mode = wanted(self.body)
            if mode is None:
                return answer(original(self), None, None, False)
            backend = self.dynamodb_backend
            touched = []
            for table_name, requests in (self.body.get("RequestItems") or {}).items():
                for request in requests if isinstance(requests, list) else ():
                    if not isinstance(request, dict):
                        continue
                    attrs = (request.get("PutRequest") or {}).get("Item") or (request.get("DeleteRequest") or {}).get("Key")
                    table, key = locate(backend, table_name, attrs)
                    if table is not None:
                        touched.append((table, key, copy.deepcopy(stored_item(table, key))))
            result = original(self)
            consumed = Consumed()
            for table, key, before in touched:
                after = stored_item(table, key)
                consumed.add(table.name, write=write_units(max(item_size(before), item_size(after))),
                             indexes=index_write_units(table, before, after))
            return answer(result, mode, consumed, False)
        return handler

    DynamoHandler.put_item = one_write(DynamoHandler.put_item, "Item")
    DynamoHandler.update_item = one_write(DynamoHandler.update_item, "Key")
    DynamoHandler.delete_item = one_write(DynamoHandler.delete_item, "Key")
    DynamoHandler.get_item = get_item(DynamoHandler.get_item)
    DynamoHandler.query = query(DynamoHandler.query)
    DynamoHandler.scan = query(DynamoHandler.scan)
    DynamoHandler.transact_write_items = transact_write_items(DynamoHandler.transact_write_items)
    DynamoHandler.transact_get_items = transact_get_items(DynamoHandler.transact_get_items)
    DynamoHandler.batch_get_item = batch_get_item(DynamoHandler.batch_get_item)
    DynamoHandler.batch_write_item = batch_write_item(DynamoHandler.batch_write_item)
    Table.query = table_query
    Table.scan = table_scan


# ---------------------------------------------------------------------------------------------------
# Strict mode: what DynamoDB documents and moto leaves out.

class Settings:
    """The strict model's knobs: defaults from the command line, overridden per table at run time."""

    RANGES = {
        "stale_read_probability": (0.0, 1.0),
        "consistency_lag_ms": (0.0, None),
        "conflict_rate": (0.0, 1.0),
        "token_window_ms": (0.0, None),
        "transaction_latency_ms": (0.0, None),
    }

    def __init__(self, defaults):
        self.defaults = self.validated(defaults)
        self._overrides = {}
        self._lock = threading.Lock()

    @classmethod
    def validated(cls, values):
        if not isinstance(values, dict):
            raise ValueError("expected a JSON object")
        unknown = sorted(set(values) - set(cls.RANGES))
        if unknown:
            raise ValueError(f"unknown settings {unknown}; known: {sorted(cls.RANGES)}")
        for name, value in values.items():
            low, high = cls.RANGES[name]
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ValueError(f"{name} must be a number")
            if value < low or (high is not None and value > high):
                raise ValueError(f"{name} must be between {low} and {high}" if high is not None
                                 else f"{name} must be at least {low}")
        return dict(values)

    def of(self, table_name):
        overrides = self._overrides.get(table_name)
        return {**self.defaults, **overrides} if overrides else self.defaults

    def override(self, table_name, values):
        values = self.validated(values)
        with self._lock:
            merged = {**self._overrides.get(table_name, {}), **values}
            self._overrides = {**self._overrides, table_name: merged}  # readers see one dict or the other
        return self.of(table_name)

    def reset(self, table_name):
        with self._lock:
            self._overrides = {name: v for name, v in self._overrides.items() if name != table_name}
        return self.of(table_name)


class Tokens:
    """ClientRequestTokens of TransactWriteItems: those in flight, and those that committed, until their window ends.

    A token is registered when its request arrives, before the request waits for anything, so a
    duplicate sent meanwhile finds it. It is kept only if its transaction committed.
    """

    REGISTERED, REPLAY, MISMATCH, IN_PROGRESS = "registered", "replay", "mismatch", "in progress"

    def __init__(self):
        self._lock = threading.Lock()
        self._tokens = {}  # token -> [digest of the parameters, expiry (monotonic seconds) or None while in flight]
        self._expiries = []  # heap of (expiry, token)

    def begin(self, token, digest, now):
        with self._lock:
            while self._expiries and self._expiries[0][0] <= now:
                expiry, expired = heapq.heappop(self._expiries)
                if self._tokens.get(expired, (None, None))[1] == expiry:
                    del self._tokens[expired]
            known = self._tokens.get(token)
            if known is None:
                self._tokens[token] = [digest, None]
                return self.REGISTERED
            if known[1] is None:
                return self.IN_PROGRESS
            return self.REPLAY if known[0] == digest else self.MISMATCH

    def finish(self, token, committed, window_seconds, now):
        with self._lock:
            if not committed:
                del self._tokens[token]
                return
            expiry = now + window_seconds
            self._tokens[token][1] = expiry
            heapq.heappush(self._expiries, (expiry, token))


class History:
    """For each table, what every recently written item was before each write, oldest first.

    Pruned to the table's lag: a change older than that is what every read sees anyway.
    """

    def __init__(self):
        self._versions = {}  # table name -> {key: deque of (time, item before or None)}
        self._order = {}  # table name -> deque of (time, key), in time order

    def record(self, table_name, key, before, now, lag_seconds):
        self._versions.setdefault(table_name, {}).setdefault(key, deque()).append((now, before))
        self._order.setdefault(table_name, deque()).append((now, key))
        self._prune(table_name, now - lag_seconds)

    def as_of(self, table_name, cutoff, keys=None):
        """{key: item or None} as the table was at `cutoff`, for the keys written since (of `keys`, if given)."""
        self._prune(table_name, cutoff)
        versions = self._versions.get(table_name, {})
        if keys is None:
            return {key: changes[0][1] for key, changes in versions.items()}
        return {key: versions[key][0][1] for key in keys if key in versions}

    def forget(self, table_name):
        self._versions.pop(table_name, None)
        self._order.pop(table_name, None)

    def _prune(self, table_name, cutoff):
        order = self._order.get(table_name)
        if not order:
            return
        versions = self._versions[table_name]
        while order and order[0][0] <= cutoff:
            _, key = order.popleft()
            changes = versions[key]
            changes.popleft()
            if not changes:
                del versions[key]
        if not order:
            self.forget(table_name)


def swap_in(table, view):
    """Puts `view`'s versions ({key: item or None}) in the table; returns what swap_out needs to undo it."""
    undo = []
    for (hash_key, range_key), item in view.items():
        if range_key is None:
            undo.append((hash_key, None, hash_key in table.items, table.items.get(hash_key), False))
            put_back(table, hash_key, None, item)
            continue
        partition = table.items.get(hash_key)
        created = partition is None
        if created:
            if item is None:
                continue
            partition = table.items[hash_key] = {}
        undo.append((hash_key, range_key, range_key in partition, partition.get(range_key), created))
        put_back(table, hash_key, range_key, item)
    return undo


def swap_out(table, undo):
    for hash_key, range_key, present, item, created in reversed(undo):
        if range_key is None:
            put_back(table, hash_key, None, item if present else None)
            continue
        partition = table.items[hash_key]
        if present:
            partition[range_key] = item
        else:
            partition.pop(range_key, None)
        if created and not partition:
            del table.items[hash_key]


def same_item(before, after):
    if before is None or after is None:
        return before is after
    return before.attrs == after.attrs


class StrictModel:
    """State of the strict mode: settings, tokens, and the recent history that stale reads are served from.

    The history is read and written only by moto's handlers, under the data lock.
    """

    def __init__(self, settings, rng=None):
        self.settings = settings
        self.tokens = Tokens()
        self.history = History()
        self.random = rng or random.Random()

    def watch(self, backend, named):
        """Copies of the items that `named` ([(table name, attributes holding a key)]) names, before a write."""
        watched = []
        for table_name, attrs in named:
            table = backend.tables.get(table_name) if isinstance(table_name, str) else None
            if table is None or self.settings.of(table_name)["consistency_lag_ms"] <= 0:
                continue
            key = item_key(table, attrs)
            if key is not None and all(w[0] != table_name or w[1] != key for w in watched):
                watched.append((table_name, key, copy.deepcopy(stored_item(table, key))))
        return watched

    def note_writes(self, backend, watched):
        """Records, for each watched item the write changed, what it was before."""
        now = time.monotonic()
        for table_name, key, before in watched:
            table = backend.tables.get(table_name)
            after = stored_item(table, key) if table is not None else None
            if not same_item(before, after):
                lag = self.settings.of(table_name)["consistency_lag_ms"] / 1000.0
                self.history.record(table_name, key, before, now, lag)

    def stale_view(self, table, table_name, body, keys):
        """The versions to serve an eventually consistent read from, or None to serve it as the table is."""
        index_name = body.get("IndexName")
        on_global_index = index_name is not None and any(i.name == index_name for i in table.global_indexes or ())
        if body.get("ConsistentRead") in (True, "true") and not on_global_index:
            return None
        settings = self.settings.of(table_name)
        lag = settings["consistency_lag_ms"] / 1000.0
        if lag <= 0 or self.random.random() >= settings["stale_read_probability"]:
            return None
        return self.history.as_of(table_name, time.monotonic() - lag, keys)

    def conflict(self, backend, transact_items):
        """TransactionConflict cancellation reasons for a well-formed transaction, drawn at its table's rate; else None."""
        if not isinstance(transact_items, list) or not 0 < len(transact_items) <= 100:
            return None
        tables = []
        for entry in transact_items:
            if not isinstance(entry, dict) or len(entry) != 1 or next(iter(entry)) not in TRANSACTION_OPERATIONS:
                return None
            op = next(iter(entry.values()))
            if not isinstance(op, dict) or op.get("TableName") not in backend.tables:
                return None  # moto answers with the error DynamoDB would give
            tables.append(op["TableName"])
        if self.random.random() >= self.settings.of(tables[0])["conflict_rate"]:
            return None
        reasons = [(None, None, None)] * len(transact_items)
        reasons[self.random.randrange(len(reasons))] = (
            "TransactionConflict", "Transaction is ongoing for the item", None)
        return reasons


def install_strict_model(model):
    """Hooks the strict model into moto's DynamoDB handlers (after install_fast_paths, if that runs)."""
    from moto.dynamodb.exceptions import TransactionCanceledException
    from moto.dynamodb.models import DynamoDBBackend
    from moto.dynamodb.responses import DynamoHandler

    def writes(original, named):
        def handler(self):
            backend = self.dynamodb_backend
            watched = model.watch(backend, named(self.body))
            try:
                return original(self)
            finally:
                model.note_writes(backend, watched)
        return handler

    def eventual(original, read_keys):
        def handler(self):
            name = self.body.get("TableName")
            table = self.dynamodb_backend.tables.get(name) if isinstance(name, str) else None
            view = model.stale_view(table, name, self.body, read_keys(table, self.body)) if table else None
            if not view:
                return original(self)
            undo = swap_in(table, view)
            try:
                return original(self)
            finally:
                swap_out(table, undo)
        return handler

    def transaction_keys(body):
        for entry in body.get("TransactItems") or ():
            if isinstance(entry, dict) and len(entry) == 1:
                op_type, op = next(iter(entry.items()))
                if isinstance(op, dict):
                    yield op.get("TableName"), op.get("Item") if op_type == "Put" else op.get("Key")

    def batch_keys(body):
        for table_name, requests in (body.get("RequestItems") or {}).items():
            for request in requests if isinstance(requests, list) else ():
                if isinstance(request, dict):
                    yield table_name, (request.get("PutRequest") or {}).get("Item")
                    yield table_name, (request.get("DeleteRequest") or {}).get("Key")

    def read_key(table, body):
        key = item_key(table, body.get("Key"))
        return [key] if key is not None else []

    DynamoHandler.put_item = writes(DynamoHandler.put_item, lambda b: [(b.get("TableName"), b.get("Item"))])
    DynamoHandler.update_item = writes(DynamoHandler.update_item, lambda b: [(b.get("TableName"), b.get("Key"))])
    DynamoHandler.delete_item = writes(DynamoHandler.delete_item, lambda b: [(b.get("TableName"), b.get("Key"))])
    DynamoHandler.batch_write_item = writes(DynamoHandler.batch_write_item, lambda b: list(batch_keys(b)))
    DynamoHandler.transact_write_items = writes(DynamoHandler.transact_write_items, lambda b: list(transaction_keys(b)))
    DynamoHandler.get_item = eventual(DynamoHandler.get_item, read_key)
    DynamoHandler.query = eventual(DynamoHandler.query, lambda table, body: None)  # the whole table's recent writes

    original_delete_table = DynamoHandler.delete_table

    def delete_table(self):
        try:
            return original_delete_table(self)
        finally:
            if self.body.get("TableName") not in self.dynamodb_backend.tables:
                model.history.forget(self.body.get("TableName"))

    DynamoHandler.delete_table = delete_table

    original_transact = DynamoDBBackend.transact_write_items

    def transact_write_items(self, transact_items):
        # Here, after moto's handler validated the request's expressions, as DynamoDB would.
        reasons = model.conflict(self, transact_items)
        if reasons is not None:
            raise TransactionCanceledException(reasons)
        return original_transact(self, transact_items)

    DynamoDBBackend.transact_write_items = transact_write_items


class StrictTransactions:
    """WSGI middleware, outside the data lock: ClientRequestTokens and the latency of TransactWriteItems."""

    def __init__(self, app, model):
        self._app = app
        self._model = model

    def __call__(self, environ, start_response):
        target = environ.get("HTTP_X_AMZ_TARGET", "")
        if not target.endswith(".TransactWriteItems"):
            return self._app(environ, start_response)
        try:
            request = json.loads(environ["launcher.body"] or b"{}")
        except ValueError:
            return self._app(environ, start_response)  # moto says what is wrong with it
        if not isinstance(request, dict):
            return self._app(environ, start_response)
        settings = self._model.settings.of(first_table(request))
        token = request.get("ClientRequestToken")
        tokens = self._model.tokens
        if isinstance(token, str):
            parameters = {name: value for name, value in request.items() if name != "ClientRequestToken"}
            digest = hashlib.sha256(json.dumps(parameters, sort_keys=True, separators=(",", ":")).encode()).digest()
            verdict = tokens.begin(token, digest, time.monotonic())
            if verdict == Tokens.REPLAY:
                return respond(start_response, 200, replay_response(request))
            if verdict == Tokens.MISMATCH:
                return dynamodb_error(start_response, "IdempotentParameterMismatchException",
                                      "DynamoDB rejected the request because you retried a request with a "
                                      "different payload but with an idempotent token that was already used.")
            if verdict == Tokens.IN_PROGRESS:
                return dynamodb_error(start_response, "TransactionInProgressException",
                                      "The transaction with the given request token is already in progress.")
        status = []

        def capture(line, headers, exc_info=None):
            status.append(line)
            return start_response(line, headers, exc_info)

        committed = False
        try:
            time.sleep(settings["transaction_latency_ms"] / 1000.0)
            result = self._app(environ, capture)  # drained under the lock: the transaction is over
            committed = bool(status) and status[-1].startswith("200")
            return result
        finally:
            if isinstance(token, str):
                tokens.finish(token, committed, settings["token_window_ms"] / 1000.0, time.monotonic())


def first_table(request):
    items = request.get("TransactItems")
    if isinstance(items, list) and items and isinstance(items[0], dict) and items[0]:
        op = next(iter(items[0].values()))
        if isinstance(op, dict) and isinstance(op.get("TableName"), str):
            return op["TableName"]
    return None


def replay_response(request):
    """What DynamoDB answers to a replayed token: nothing, and the read capacity used if that was asked."""
    if request.get("ReturnConsumedCapacity") not in ("TOTAL", "INDEXES"):
        return {}
    per_table = {}
    for entry in request.get("TransactItems") or ():
        op = next(iter(entry.values())) if isinstance(entry, dict) and entry else None
        if isinstance(op, dict) and isinstance(op.get("TableName"), str):
            per_table[op["TableName"]] = per_table.get(op["TableName"], 0.0) + 2.0  # a transactional read
    return {"ConsumedCapacity": [{"TableName": name, "CapacityUnits": units, "ReadCapacityUnits": units}
                                 for name, units in per_table.items()]}


class SettingsEndpoint:
    """WSGI middleware that answers /_strict/... itself; nothing there reaches moto."""

    PREFIX = "/_strict"

    def __init__(self, app, settings, strict):
        self._app = app
        self._settings = settings
        self._strict = strict

    def __call__(self, environ, start_response):
        path = environ.get("PATH_INFO", "")
        if path != self.PREFIX and not path.startswith(self.PREFIX + "/"):
            return self._app(environ, start_response)
        method = environ.get("REQUEST_METHOD", "GET")
        if path.rstrip("/") == self.PREFIX:
            return self._json(start_response, 200, {"strict": True, "defaults": self._settings.defaults}
                              if self._strict else {"strict": False})
        if not path.startswith(self.PREFIX + "/tables/") or len(path) == len(self.PREFIX + "/tables/"):
            return self._json(start_response, 404, {"message": "try /_strict or /_strict/tables/{TableName}"})
        table_name = unquote(path[len(self.PREFIX + "/tables/"):])
        if method == "GET":
            settings = self._settings.of(table_name)
        elif not self._strict:
            if method not in ("POST", "DELETE"):
                return self._json(start_response, 405, {"message": "GET, POST or DELETE"})
            return self._json(start_response, 200, {
                "strict": False, "applied": False, "table": table_name,
                "message": "the launcher runs with --lenient: per-table settings change nothing"})
        elif method == "POST":
            try:
                settings = self._settings.override(table_name, json.loads(environ["launcher.body"] or b"{}"))
            except ValueError as invalid:
                return self._json(start_response, 400, {"message": str(invalid)})
        elif method == "DELETE":
            settings = self._settings.reset(table_name)
        else:
            return self._json(start_response, 405, {"message": "GET, POST or DELETE"})
        return self._json(start_response, 200, {
            "strict": self._strict, "applied": self._strict, "table": table_name, "settings": settings})

    @staticmethod
    def _json(start_response, status, payload):
        return respond(start_response, status, payload, "application/json")


# ---------------------------------------------------------------------------------------------------
# Key counts (--count-keys): which partitions the requests went to.

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


def install_key_counts(counts):
    """Counts each request's partition keys in moto's handlers, where the tables' key schemas are known."""
    from moto.dynamodb.models.table import Table
    from moto.dynamodb.responses import DynamoHandler

    def partition(backend, table_name, attrs):
        table = backend.tables.get(table_name) if isinstance(table_name, str) else None
        key = item_key(table, attrs) if table is not None else None
        return key[0] if key is not None else None

    def counting(original, kind, keys):
        def handler(self):
            try:
                for table_name, attrs in keys(self.body):
                    counts.add(table_name, kind, partition(self.dynamodb_backend, table_name, attrs))
            except Exception:  # a malformed request: moto says what is wrong with it
                pass
            return original(self)
        return handler

    def transaction_items(body):
        for entry in body.get("TransactItems") or ():
            if isinstance(entry, dict) and len(entry) == 1:
                op_type, op = next(iter(entry.items()))
                if isinstance(op, dict) and op_type != "ConditionCheck":
                    yield op.get("TableName"), op.get("Item") if op_type == "Put" else op.get("Key")

    def batch_items(body):
        for table_name, requests in (body.get("RequestItems") or {}).items():
            for request in requests if isinstance(requests, list) else ():
                if isinstance(request, dict) and "PutRequest" in request:
                    yield table_name, request["PutRequest"].get("Item")
                elif isinstance(request, dict) and "DeleteRequest" in request:
                    yield table_name, request["DeleteRequest"].get("Key")

    def one(attribute):
        return lambda body: [(body.get("TableName"), body.get(attribute))]

    DynamoHandler.get_item = counting(DynamoHandler.get_item, "reads", one("Key"))
    DynamoHandler.put_item = counting(DynamoHandler.put_item, "writes", one("Item"))
    DynamoHandler.update_item = counting(DynamoHandler.update_item, "writes", one("Key"))
    DynamoHandler.delete_item = counting(DynamoHandler.delete_item, "writes", one("Key"))
    DynamoHandler.batch_write_item = counting(DynamoHandler.batch_write_item, "writes", batch_items)
    DynamoHandler.transact_write_items = counting(DynamoHandler.transact_write_items, "writes", transaction_items)

    original_query = Table.query

    def query(self, hash_key, *args, **kwargs):
        counts.add(self.name, "reads", hash_key)  # on an index, the index's partition value
        return original_query(self, hash_key, *args, **kwargs)

    Table.query = query


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
            return respond(start_response, 404, {"message": "start the launcher with --count-keys"}, "application/json")
        if not path.startswith(self.PREFIX) or len(path) == len(self.PREFIX):
            return respond(start_response, 404, {"message": "try /_keys/tables/{TableName}"}, "application/json")
        table_name = unquote(path[len(self.PREFIX):])
        method = environ.get("REQUEST_METHOD", "GET")
        if method == "DELETE":
            self._counts.reset(table_name)
        elif method != "GET":
            return respond(start_response, 405, {"message": "GET or DELETE"}, "application/json")
        return respond(start_response, 200, self._counts.of(table_name), "application/json")


def non_negative(kind):
    def parse(text):
        value = kind(text)
        if not math.isfinite(value) or value < 0:
            raise argparse.ArgumentTypeError(f"{text} is not a non-negative number")
        return value
    return parse


def probability(text):
    value = float(text)
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text} is not between 0 and 1")
    return value


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-H", "--host", default="127.0.0.1")
    parser.add_argument("-p", "--port", type=int, default=5000)
    parser.add_argument("--plain", action="store_true", help="keep moto's own transaction and query paths")
    parser.add_argument("--lenient", action="store_true",
                        help="moto's own kindness: no tokens, stale reads or conflicts (the settings below are ignored)")
    parser.add_argument("--token-window-seconds", type=non_negative(float), default=600.0,
                        help="how long a committed ClientRequestToken is remembered (DynamoDB: 10 minutes)")
    parser.add_argument("--transaction-latency-ms", type=non_negative(float), default=0.0,
                        help="how long each TransactWriteItems waits, its token in flight, before it applies")
    parser.add_argument("--stale-read-probability", type=probability, default=1.0,
                        help="chance that an eventually consistent read sees the table as it was --consistency-lag-ms ago")
    parser.add_argument("--consistency-lag-ms", type=non_negative(float), default=200.0,
                        help="how far behind an eventually consistent read may be")
    parser.add_argument("--conflict-rate", type=probability, default=0.0,
                        help="chance that a TransactWriteItems is cancelled with TransactionConflict")
    parser.add_argument("--count-keys", action="store_true",
                        help="count each table's requests per partition key (GET /_keys/tables/NAME)")
    args = parser.parse_args(argv)

    if not args.plain:
        install_fast_paths()
    install_consumed_capacity()  # in both modes: capacity figures are measured against the lenient one too
    settings = Settings({
        "stale_read_probability": args.stale_read_probability,
        "consistency_lag_ms": args.consistency_lag_ms,
        "conflict_rate": args.conflict_rate,
        "token_window_ms": args.token_window_seconds * 1000.0,
        "transaction_latency_ms": args.transaction_latency_ms,
    })

    # One log line per request would cost more than the request; errors still show.
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    app = SerializedApp(DomainDispatcherApplication(create_backend_app))
    if not args.lenient:
        model = StrictModel(settings)
        install_strict_model(model)
        app = StrictTransactions(app, model)
    counts = KeyCounts() if args.count_keys else None
    if counts is not None:
        install_key_counts(counts)
    app = BodyFirst(KeyCountsEndpoint(SettingsEndpoint(app, settings, strict=not args.lenient), counts))
    server = make_server(args.host, args.port, app, threaded=True)
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
    signal.signal(signal.SIGINT, lambda *_: threading.Thread(target=server.shutdown).start())
    print(f"moto listening on http://{args.host}:{server.server_port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
