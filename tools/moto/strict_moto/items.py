"""Items in moto's tables: their keys, and reading or replacing what a table stores under one."""


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


def locate(backend, table_name, attrs):
    """(table, key) of the item `attrs` names in the backend's table `table_name`, or (None, None)."""
    table = backend.tables.get(table_name) if isinstance(table_name, str) else None
    key = item_key(table, attrs) if table is not None else None
    return (table, key) if key is not None else (None, None)


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


def same_item(before, after):
    if before is None or after is None:
        return before is after
    return before.attrs == after.attrs


def transaction_items(body):
    """(operation, table name, attributes holding the key) of each operation of a TransactWriteItems."""
    for entry in body.get("TransactItems") or ():
        if isinstance(entry, dict) and len(entry) == 1:
            op_type, op = next(iter(entry.items()))
            if isinstance(op, dict):
                yield op_type, op.get("TableName"), op.get("Item") if op_type == "Put" else op.get("Key")


def batch_items(body):
    """(table name, attributes holding the key) of each PutRequest and DeleteRequest of a BatchWriteItem."""
    for table_name, requests in (body.get("RequestItems") or {}).items():
        for request in requests if isinstance(requests, list) else ():
            if not isinstance(request, dict):
                continue
            put, delete = request.get("PutRequest"), request.get("DeleteRequest")
            if isinstance(put, dict):
                yield table_name, put.get("Item")
            elif isinstance(delete, dict):
                yield table_name, delete.get("Key")


def on_table_deleted(patches, forget):
    """Calls `forget(table name)` once a DeleteTable has removed its table: what the launcher keeps per table goes."""
    from moto.dynamodb.responses import DynamoHandler

    def wrapper(original):
        def handler(self):
            try:
                return original(self)
            finally:
                if self.body.get("TableName") not in self.dynamodb_backend.tables:
                    forget(self.body.get("TableName"))
        return handler

    patches.wrap(DynamoHandler, "delete_table", wrapper)
