"""Consumed capacity: what DynamoDB's documentation says a request consumes, not moto's flat figures.

moto bills flat figures whatever the items' sizes (0.5 per GetItem, 1 per Query or PutItem, 0.5 per
UpdateItem even unasked, nothing for TransactWriteItems). Here: item sizes from attribute names and
values; reads in 4 KB units, eventual ones half; a Query rounds up the total size of the items it
read (before any filter), at least one unit; writes in 1 KB units of the larger of the item before
and after; transactions double each item's units (a ConditionCheck is a transactional read); writes
to global secondary indexes are added as DynamoDB adds them to TOTAL. A Scan is billed like a Query.
Installed in every mode, the lenient one included: the benchmark measures capacity against it.
"""
import base64
import copy
import json
import math
import threading

from strict_moto.items import batch_items, locate, stored_item, transaction_items

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


def install_consumed_capacity(patches):
    """Makes every answer's ConsumedCapacity the one DynamoDB documents, when the request asks for it.

    Installed before the strict model's wrappers, so that a stale read is billed for the version it
    served.
    """
    from moto.dynamodb.models.table import Table
    from moto.dynamodb.responses import DynamoHandler

    def wanted(body):
        mode = body.get("ReturnConsumedCapacity", "NONE")
        return mode if mode in ("TOTAL", "INDEXES") else None

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

    def billed(results, filter_expression, projection, scanned_count, last_evaluated_key):
        """Counts the bytes of what was read, then filters and projects it as moto would have."""
        if getattr(_reading, "bytes", None) is not None:
            _reading.bytes += sum(item_size(r) for r in results)  # an index's items as projected there
        if filter_expression is not None:
            results = [r for r in results if filter_expression.expr(r)]
        if projection:
            results = [r.project(projection) for r in results]
        return results, scanned_count, last_evaluated_key

    def writes(original, named, factor, split):
        """A handler of several writes ((operation, table name, key attributes) from `named`), each billed
        `factor` times, a ConditionCheck among them as a read; `split` as in Consumed.entries."""
        def handler(self):
            mode = wanted(self.body)
            if mode is None:
                return answer(original(self), None, None, False)
            backend = self.dynamodb_backend
            touched = []
            for op_type, table_name, attrs in named(self.body):
                table, key = locate(backend, table_name, attrs)
                if table is not None:
                    touched.append((op_type, table, key, copy.deepcopy(stored_item(table, key))))
            result = original(self)
            consumed = Consumed()
            for op_type, table, key, before in touched:
                if op_type == "ConditionCheck":
                    consumed.add(table.name, read=factor * read_units(item_size(before), True))
                    continue
                after = stored_item(table, key)
                consumed.add(table.name, write=factor * write_units(max(item_size(before), item_size(after))),
                             indexes=index_write_units(table, before, after))
            return answer(result, mode, consumed, False, split=split)
        return handler

    def batch_writes(body):
        return (("Write", table_name, attrs) for table_name, attrs in batch_items(body))

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

    patches.wrap(DynamoHandler, "put_item", lambda original: one_write(original, "Item"))
    patches.wrap(DynamoHandler, "update_item", lambda original: one_write(original, "Key"))
    patches.wrap(DynamoHandler, "delete_item", lambda original: one_write(original, "Key"))
    patches.wrap(DynamoHandler, "get_item", get_item)
    patches.wrap(DynamoHandler, "query", query)
    patches.wrap(DynamoHandler, "scan", query)
    # A transaction bills each item twice, and answers its reads and writes apart.
    patches.wrap(DynamoHandler, "transact_write_items", lambda original: writes(original, transaction_items, 2, True))
    patches.wrap(DynamoHandler, "transact_get_items", transact_get_items)
    patches.wrap(DynamoHandler, "batch_get_item", batch_get_item)
    patches.wrap(DynamoHandler, "batch_write_item", lambda original: writes(original, batch_writes, 1, False))
    # Table.scan's legacy ScanFilter (its first argument) still applies first, as moto has it.
    patches.wrap(Table, "query", lambda original: billing(original, 8, "filter_expression", 5, "projection_expressions"))
    patches.wrap(Table, "scan", lambda original: billing(original, 2, "filter_expression", 5, "projection_expression"))
