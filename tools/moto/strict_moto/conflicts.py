"""Contention: at a table's conflict rate, a TransactWriteItems is cancelled with one TransactionConflict
reason (the others None), as DynamoDB does when another transaction holds one of its items."""

TRANSACTION_OPERATIONS = ("ConditionCheck", "Put", "Delete", "Update")


class Conflicts:
    """Draws, with `rng`, which transactions conflict and on which of their items."""

    def __init__(self, settings, rng):
        self._settings = settings
        self._random = rng

    def reasons(self, backend, transact_items):
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
        if self._random.random() >= self._settings.of(tables[0])["conflict_rate"]:
            return None
        reasons = [(None, None, None)] * len(transact_items)
        reasons[self._random.randrange(len(reasons))] = (
            "TransactionConflict", "Transaction is ongoing for the item", None)
        return reasons


def install_conflicts(patches, conflicts):
    """Cancels transactions in moto's backend, after moto's handler validated the request's expressions, as
    DynamoDB would (and after the fast paths, if installed, so nothing is saved for a conflict)."""
    from moto.dynamodb.exceptions import TransactionCanceledException
    from moto.dynamodb.models import DynamoDBBackend

    def wrapper(original):
        def transact_write_items(self, transact_items):
            reasons = conflicts.reasons(self, transact_items)
            if reasons is not None:
                raise TransactionCanceledException(reasons)
            return original(self, transact_items)
        return transact_write_items

    patches.wrap(DynamoDBBackend, "transact_write_items", wrapper)
