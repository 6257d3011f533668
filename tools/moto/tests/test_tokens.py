"""tokens.py: ClientRequestTokens kept for their window after a commit, and each transaction's latency."""
import threading

import pytest
from conftest import DynamoError

from strict_moto.tokens import Tokens


def put_transaction(table, pk, value, token, **extra):
    item = {"PK": {"S": pk}, "SK": {"S": "A"}, "v": {"S": value}}
    return {"TransactItems": [{"Put": {"TableName": table, "Item": item}}], "ClientRequestToken": token, **extra}


def test_tokens_replayWithinTheWindow_mismatchWithOtherParameters_forgottenAtItsEnd():
    tokens = Tokens()
    assert tokens.begin("t", b"same", now=0.0) == Tokens.REGISTERED
    assert tokens.begin("t", b"same", now=1.0) == Tokens.IN_PROGRESS
    tokens.finish("t", committed=True, window_seconds=600.0, now=2.0)

    assert tokens.begin("t", b"same", now=601.9) == Tokens.REPLAY
    assert tokens.begin("t", b"other", now=601.9) == Tokens.MISMATCH
    assert tokens.begin("t", b"other", now=602.0) == Tokens.REGISTERED


def test_tokens_recordNothing_forACancelledTransaction():
    tokens = Tokens()
    tokens.begin("t", b"first", now=0.0)
    tokens.finish("t", committed=False, window_seconds=600.0, now=0.0)

    assert tokens.begin("t", b"second", now=0.0) == Tokens.REGISTERED


def test_replayedToken_answersEmpty_withoutWritingAgain(launch):
    dynamo = launch()
    table = dynamo.table()
    dynamo.call("TransactWriteItems", **put_transaction(table, "p", "first", "token-1"))
    dynamo.put(table, "p", v="changed since")

    assert dynamo.call("TransactWriteItems", **put_transaction(table, "p", "first", "token-1")) == {}
    assert dynamo.get(table, "p", consistent=True)["v"] == "changed since"


def test_replayedToken_writesAgain_onceItsWindowHasPassed(launch, clock):
    dynamo = launch(token_window_ms=10_000)
    table = dynamo.table()
    dynamo.call("TransactWriteItems", **put_transaction(table, "p", "first", "token-1"))
    dynamo.put(table, "p", v="changed since")
    clock.advance(10.0)

    dynamo.call("TransactWriteItems", **put_transaction(table, "p", "first", "token-1"))

    assert dynamo.get(table, "p", consistent=True)["v"] == "first"


def test_tokenReusedWithOtherParameters_isIdempotentParameterMismatch(launch):
    dynamo = launch()
    table = dynamo.table()
    dynamo.call("TransactWriteItems", **put_transaction(table, "p", "first", "token-1"))

    with pytest.raises(DynamoError) as refused:
        dynamo.call("TransactWriteItems", **put_transaction(table, "p", "second", "token-1"))

    assert refused.value.type == "IdempotentParameterMismatchException"
    assert dynamo.get(table, "p", consistent=True)["v"] == "first"


def test_cancelledTransaction_leavesItsTokenFree(launch):
    dynamo = launch()
    table = dynamo.table()
    dynamo.put(table, "p", v="there")
    cancelled = put_transaction(table, "p", "first", "token-1")
    cancelled["TransactItems"][0]["Put"]["ConditionExpression"] = "attribute_not_exists(PK)"
    with pytest.raises(DynamoError) as refused:
        dynamo.call("TransactWriteItems", **cancelled)
    assert refused.value.type == "TransactionCanceledException"

    dynamo.call("TransactWriteItems", **put_transaction(table, "p", "second", "token-1"))

    assert dynamo.get(table, "p", consistent=True)["v"] == "second"


def test_replayWithConsumedCapacity_answersTheReadOfEachTable(launch):
    dynamo = launch()
    table = dynamo.table()
    request = put_transaction(table, "p", "first", "token-1", ReturnConsumedCapacity="TOTAL")
    dynamo.call("TransactWriteItems", **request)

    assert dynamo.call("TransactWriteItems", **request) == {
        "ConsumedCapacity": [{"TableName": table, "CapacityUnits": 2.0, "ReadCapacityUnits": 2.0}]}


def test_sameTokenWhileTheFirstIsInFlight_isTransactionInProgress(launch):
    in_flight, let_it_apply = threading.Event(), threading.Event()
    waited = []

    def sleep(seconds):  # the transaction's latency: held until the test lets it go
        waited.append(seconds)
        in_flight.set()
        assert let_it_apply.wait(5)

    dynamo = launch(transaction_latency_ms=250, sleep=sleep)
    table = dynamo.table()
    first = threading.Thread(target=dynamo.call, args=("TransactWriteItems",),
                             kwargs=put_transaction(table, "p", "first", "token-1"))
    first.start()
    assert in_flight.wait(5)
    try:
        with pytest.raises(DynamoError) as refused:
            dynamo.call("TransactWriteItems", **put_transaction(table, "p", "first", "token-1"))
        assert refused.value.type == "TransactionInProgressException"
        assert dynamo.get(table, "p", consistent=True) is None  # the first waits before it applies
    finally:
        let_it_apply.set()
        first.join(5)

    assert waited == [0.25]
    assert dynamo.get(table, "p", consistent=True)["v"] == "first"
    assert dynamo.call("TransactWriteItems", **put_transaction(table, "p", "first", "token-1")) == {}
