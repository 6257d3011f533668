"""server.py: what --lenient leaves out of the app it builds."""


def test_lenientApp_ignoresTokens_readsFresh_andNeverConflicts(launch, draws):
    dynamo = launch(lenient=True, conflict_rate=1.0)
    table = dynamo.table()
    draws.value = 0.0  # would make every read stale and every transaction conflict, if they were modelled
    transaction = {"ClientRequestToken": "token-1", "TransactItems": [
        {"Put": {"TableName": table, "Item": {"PK": {"S": "p"}, "SK": {"S": "A"}, "v": {"S": "first"}}}}]}
    dynamo.call("TransactWriteItems", **transaction)
    dynamo.put(table, "p", v="changed since")

    dynamo.call("TransactWriteItems", **transaction)

    assert dynamo.get(table, "p")["v"] == "first"
