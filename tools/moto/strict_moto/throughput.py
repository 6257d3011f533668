"""Per-partition throughput: DynamoDB serves at most 1,000 write units and 3,000 read units a second to one
partition key, in either capacity mode; past it, it throttles that key whatever the table's capacity.

Each (table or index, partition key value, reads or writes) has a token bucket that fills at the table's
`partition_write_units` or `partition_read_units` a second and holds `burst_seconds` of them (a full bucket
lets one request through however large, as a partition never refuses a lone item). A request takes the
units capacity.py bills it (sizes rounded to 1 KB written, 4 KB read, transactions double) from every
bucket it touches, all or nothing; when one is short:

- GetItem, PutItem, UpdateItem, DeleteItem and Query fail with ThrottlingException on an on-demand table
  (ProvisionedThroughputExceededException on a provisioned one), carrying ThrottlingReasons such as
  {"reason": "TableWriteKeyRangeThroughputExceeded", "resource": the table's ARN};
- TransactWriteItems and TransactGetItems are cancelled (TransactionCanceledException) with the reason
  ThrottlingError on each throttled item and None on the others; nothing is written;
- BatchGetItem and BatchWriteItem serve what they can and hand the rest back as UnprocessedKeys or
  UnprocessedItems; with nothing served, they fail as a single read or write does.

A Query is admitted while its partition has any units left, and billed what it read afterwards, since
its size is known only then. Writes to global secondary indexes are not limited here (a table's writes
are); reads of an index are, on the index's partition. A limit of 0 turns that limit off, and a
`throttled_key_prefix` confines the limits to partition keys that start with it (a benchmark scales them
down for one product's stock alone, so that no other key comes near them, as none would in DynamoDB). The
lenient mode has none of this: moto's kindness.
"""
import json
import threading

from strict_moto.capacity import item_size, read_units, write_units
from strict_moto.items import batch_items, locate, on_table_deleted, stored_item

ERROR_PREFIX = "com.amazonaws.dynamodb.v20120810#"
THROTTLED_MESSAGE = "Throughput exceeds the current throughput limit for one partition key of your table or index"


class Throughput:
    """Token buckets per (table, index or None, partition value, "read" or "write"), filled on `clock`."""

    def __init__(self, settings, clock):
        self._settings = settings
        self._clock = clock
        self._lock = threading.Lock()
        self._buckets = {}  # bucket key -> [tokens, time of the last fill]

    def _limit(self, bucket):
        table_name, _, partition, kind = bucket
        settings = self._settings.of(table_name)
        if not partition.startswith(settings.get("throttled_key_prefix", "")):
            return 0.0, 0.0
        rate = settings["partition_write_units" if kind == "write" else "partition_read_units"]
        return rate, rate * settings["burst_seconds"]

    def _filled(self, bucket, rate, capacity, now):
        tokens, since = self._buckets.get(bucket, (capacity, now))
        tokens = min(capacity, tokens + (now - since) * rate)
        self._buckets[bucket] = [tokens, now]
        return tokens

    def take(self, charges):
        """Takes each charge ((table, index, partition, kind), units) if every bucket has them; else takes
        nothing and returns the set of the buckets that were short."""
        needed = {}
        for bucket, units in charges:
            needed[bucket] = needed.get(bucket, 0.0) + units
        with self._lock:
            now = self._clock()
            short = set()
            levels = {}
            for bucket, units in needed.items():
                rate, capacity = self._limit(bucket)
                if rate <= 0:
                    continue
                levels[bucket] = tokens = self._filled(bucket, rate, capacity, now)
                if tokens < units and tokens < capacity:
                    short.add(bucket)
            if not short:
                for bucket, tokens in levels.items():
                    self._buckets[bucket][0] = tokens - needed[bucket]
            return short

    def admits(self, bucket):
        """Whether `bucket` has any units left (a Query is billed once it has read)."""
        with self._lock:
            rate, capacity = self._limit(bucket)
            return rate <= 0 or self._filled(bucket, rate, capacity, self._clock()) > 0

    def bill(self, bucket, units):
        """Takes `units` from `bucket` whatever it holds: what a Query read after it was admitted."""
        with self._lock:
            rate, capacity = self._limit(bucket)
            if rate > 0:
                self._buckets[bucket][0] = self._filled(bucket, rate, capacity, self._clock()) - units

    def forget(self, table_name):
        with self._lock:
            self._buckets = {b: v for b, v in self._buckets.items() if b[0] != table_name}


def partition_value(hash_key):
    value = hash_key.value if hasattr(hash_key, "value") else hash_key
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def throttled(table, bucket):
    """The error of a single request throttled on `bucket`, as DynamoDB answers it."""
    from moto.dynamodb.exceptions import DynamodbException

    _, index, _, kind = bucket
    provisioned = (getattr(table, "billing_mode", None) or "PROVISIONED") != "PAY_PER_REQUEST"
    error = ("ProvisionedThroughputExceededException" if provisioned else "ThrottlingException")
    reason = ("Index" if index else "Table") + ("Read" if kind == "read" else "Write") + "KeyRangeThroughputExceeded"
    resource = table.table_arn + (f"/index/{index}" if index else "")
    exception = DynamodbException(ERROR_PREFIX + error, THROTTLED_MESSAGE)
    exception.description = json.dumps({"__type": ERROR_PREFIX + error, "message": THROTTLED_MESSAGE,
                                        "ThrottlingReasons": [{"reason": reason, "resource": resource}]})
    return exception


def install_throughput(patches, throughput):
    """Hooks `throughput` into moto's handlers, outside every other wrapper: a throttled request does nothing."""
    from moto.dynamodb.exceptions import TransactionCanceledException
    from moto.dynamodb.responses import DynamoHandler

    def consistent(body):
        return body.get("ConsistentRead") in (True, "true")

    def one(kind, key_attribute):
        def wrapper(original):
            def handler(self):
                table, key = locate(self.dynamodb_backend, self.body.get("TableName"), self.body.get(key_attribute))
                if table is None:
                    return original(self)
                size = item_size(stored_item(table, key))
                if kind == "write":
                    units = write_units(max(size, _request_item_size(self.body.get("Item"))))
                else:
                    units = read_units(size, consistent(self.body))
                bucket = (table.name, None, partition_value(key[0]), kind)
                if throughput.take([(bucket, units)]):
                    raise throttled(table, bucket)
                return original(self)
            return handler
        return wrapper

    def transaction(kind_of, factor):
        def wrapper(original):
            def handler(self):
                charges = []
                for entry in self.body.get("TransactItems") or ():
                    if not isinstance(entry, dict) or len(entry) != 1:
                        return original(self)  # moto says what is wrong with it
                    op_type, op = next(iter(entry.items()))
                    table, key = locate(self.dynamodb_backend, op.get("TableName"),
                                        (op.get("Item") if op_type == "Put" else op.get("Key"))) if isinstance(op, dict) else (None, None)
                    if table is None:
                        return original(self)
                    kind = kind_of(op_type)
                    size = item_size(stored_item(table, key))
                    units = factor * (write_units(max(size, _request_item_size(op.get("Item")))) if kind == "write"
                                      else read_units(size, True))
                    charges.append(((table.name, None, partition_value(key[0]), kind), units))
                short = throughput.take(charges)
                if short:
                    raise TransactionCanceledException([
                        ("ThrottlingError", THROTTLED_MESSAGE, None) if bucket in short else (None, None, None)
                        for bucket, _ in charges])
                return original(self)
            return handler
        return wrapper

    def batch_get_item(original):
        def handler(self):
            requests = self.body.get("RequestItems")
            if not isinstance(requests, dict):
                return original(self)
            unprocessed, served, first = {}, 0, None
            for table_name, request in requests.items():
                if not isinstance(request, dict) or not isinstance(request.get("Keys"), list):
                    return original(self)
                kept = []
                for attrs in request["Keys"]:
                    table, key = locate(self.dynamodb_backend, table_name, attrs)
                    if table is None:
                        kept.append(attrs)
                        continue
                    bucket = (table.name, None, partition_value(key[0]), "read")
                    if throughput.take([(bucket, read_units(item_size(stored_item(table, key)), consistent(request)))]):
                        unprocessed.setdefault(table_name, {**request, "Keys": []})["Keys"].append(attrs)
                        first = first or (table, bucket)
                    else:
                        kept.append(attrs)
                served += len(kept)
                request["Keys"] = kept
            if first and not served:
                raise throttled(*first)
            self.body["RequestItems"] = {name: r for name, r in requests.items() if r["Keys"]}
            result = original(self)
            return _with_unprocessed(result, "UnprocessedKeys", unprocessed)
        return handler

    def batch_write_item(original):
        def handler(self):
            requests = self.body.get("RequestItems")
            if not isinstance(requests, dict):
                return original(self)
            unprocessed, served, first = {}, 0, None
            for table_name, writes in requests.items():
                if not isinstance(writes, list):
                    return original(self)
                kept = []
                for request in writes:
                    attrs = next((a for _, a in batch_items({"RequestItems": {table_name: [request]}})), None)
                    table, key = locate(self.dynamodb_backend, table_name, attrs)
                    if table is None:
                        kept.append(request)
                        continue
                    put = (request.get("PutRequest") or {}).get("Item")
                    units = write_units(max(item_size(stored_item(table, key)), _request_item_size(put)))
                    bucket = (table.name, None, partition_value(key[0]), "write")
                    if throughput.take([(bucket, units)]):
                        unprocessed.setdefault(table_name, []).append(request)
                        first = first or (table, bucket)
                    else:
                        kept.append(request)
                served += len(kept)
                requests[table_name] = kept
            if first and not served:
                raise throttled(*first)
            self.body["RequestItems"] = {name: w for name, w in requests.items() if w}
            result = original(self)
            return _with_unprocessed(result, "UnprocessedItems", unprocessed)
        return handler

    patches.wrap(DynamoHandler, "get_item", one("read", "Key"))
    patches.wrap(DynamoHandler, "put_item", one("write", "Item"))
    patches.wrap(DynamoHandler, "update_item", one("write", "Key"))
    patches.wrap(DynamoHandler, "delete_item", one("write", "Key"))
    patches.wrap(DynamoHandler, "transact_write_items",
                 transaction(lambda op_type: "read" if op_type == "ConditionCheck" else "write", 2))
    patches.wrap(DynamoHandler, "transact_get_items", transaction(lambda op_type: "read", 2))
    patches.wrap(DynamoHandler, "batch_get_item", batch_get_item)
    patches.wrap(DynamoHandler, "batch_write_item", batch_write_item)
    on_table_deleted(patches, throughput.forget)


def install_query_throughput(patches, throughput):
    """Limits Table.query from inside capacity.py's billing (so installed before it): it sees what a Query read
    before any filter or projection."""
    from moto.dynamodb.models.table import Table

    def query(original):
        def read(self, hash_key, *args, **kwargs):
            index = kwargs.get("index_name") if "index_name" in kwargs else (args[6] if len(args) > 6 else None)
            strong = kwargs.get("consistent_read", args[7] if len(args) > 7 else False) and not index
            bucket = (self.name, index, partition_value(hash_key), "read")
            if not throughput.admits(bucket):
                raise throttled(self, bucket)
            results, scanned_count, last_evaluated_key = original(self, hash_key, *args, **kwargs)
            throughput.bill(bucket, read_units(sum(item_size(r) for r in results), bool(strong)))
            return results, scanned_count, last_evaluated_key
        return read

    patches.wrap(Table, "query", query)


def _request_item_size(attrs):
    """The size of an item as a request spells it (DynamoDB JSON), or 0."""
    if not isinstance(attrs, dict):
        return 0
    from strict_moto.capacity import value_size
    return sum(len(name.encode("utf-8")) + value_size(value) for name, value in attrs.items())


def _with_unprocessed(result, field, unprocessed):
    """moto's answer with the throttled requests added to its UnprocessedKeys or UnprocessedItems."""
    if not unprocessed:
        return result
    if hasattr(result, "result") and isinstance(result.result, dict):
        result.result.setdefault(field, {}).update(unprocessed)
    return result
