"""Eventual consistency: reads without ConsistentRead, and reads of a global index, may see the table as
it was a lag ago.

Every write records what the items it changed were before it (History); an eventually consistent
read is then served, at the table's stale-read probability, with those older versions swapped into
the table for the time of the read.
"""
import copy
from collections import deque

from strict_moto.items import (batch_items, item_key, on_table_deleted, put_back, same_item, stored_item,
                               transaction_items)


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


class Consistency:
    """The recent history that stale reads are served from, and when to serve one.

    `clock` gives monotonic seconds, `rng` draws whether a read is stale. The history is read and
    written only by moto's handlers, under the data lock.
    """

    def __init__(self, settings, clock, rng):
        self.settings = settings
        self.history = History()
        self._clock = clock
        self._random = rng

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
        now = self._clock()
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
        if lag <= 0 or self._random.random() >= settings["stale_read_probability"]:
            return None
        return self.history.as_of(table_name, self._clock() - lag, keys)


def install_consistency(patches, consistency):
    """Hooks `consistency` into moto's DynamoDB handlers: writes are watched, eventual reads may be stale."""
    from moto.dynamodb.responses import DynamoHandler

    def writes(named):
        def wrapper(original):
            def handler(self):
                backend = self.dynamodb_backend
                watched = consistency.watch(backend, named(self.body))
                try:
                    return original(self)
                finally:
                    consistency.note_writes(backend, watched)
            return handler
        return wrapper

    def eventual(read_keys):
        def wrapper(original):
            def handler(self):
                name = self.body.get("TableName")
                table = self.dynamodb_backend.tables.get(name) if isinstance(name, str) else None
                view = consistency.stale_view(table, name, self.body, read_keys(table, self.body)) if table else None
                if not view:
                    return original(self)
                undo = swap_in(table, view)
                try:
                    return original(self)
                finally:
                    swap_out(table, undo)
            return handler
        return wrapper

    def one(attribute):
        return lambda body: [(body.get("TableName"), body.get(attribute))]

    def read_key(table, body):
        key = item_key(table, body.get("Key"))
        return [key] if key is not None else []

    patches.wrap(DynamoHandler, "put_item", writes(one("Item")))
    patches.wrap(DynamoHandler, "update_item", writes(one("Key")))
    patches.wrap(DynamoHandler, "delete_item", writes(one("Key")))
    patches.wrap(DynamoHandler, "batch_write_item", writes(lambda body: list(batch_items(body))))
    patches.wrap(DynamoHandler, "transact_write_items",
                 writes(lambda body: [(name, attrs) for _, name, attrs in transaction_items(body)]))
    patches.wrap(DynamoHandler, "get_item", eventual(read_key))
    patches.wrap(DynamoHandler, "query", eventual(lambda table, body: None))  # the whole table's recent writes
    on_table_deleted(patches, consistency.history.forget)
