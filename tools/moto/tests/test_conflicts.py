"""conflicts.py: at the conflict rate, a transaction is cancelled with one TransactionConflict reason."""
import pytest
from conftest import DynamoError


def two_puts(table):
    return [{"Put": {"TableName": table, "Item": {"PK": {"S": pk}, "SK": {"S": "A"}, "v": {"S": "x"}}}}
            for pk in ("a", "b")]


def test_drawBelowTheRate_cancelsTheTransaction_onTheDrawnItem_writingNothing(launch, draws):
    dynamo = launch(conflict_rate=0.5)
    table = dynamo.table()
    draws.value, draws.index = 0.49, 1

    with pytest.raises(DynamoError) as cancelled:
        dynamo.call("TransactWriteItems", TransactItems=two_puts(table))

    assert cancelled.value.type == "TransactionCanceledException"
    assert [reason["Code"] for reason in cancelled.value.body["CancellationReasons"]] == [
        "None", "TransactionConflict"]
    assert dynamo.get(table, "a", consistent=True) is None
    assert dynamo.get(table, "b", consistent=True) is None


def test_drawAtTheRate_letsTheTransactionThrough(launch, draws):
    dynamo = launch(conflict_rate=0.5)
    table = dynamo.table()
    draws.value = 0.5

    dynamo.call("TransactWriteItems", TransactItems=two_puts(table))

    assert dynamo.get(table, "b", consistent=True)["v"] == "x"


def test_aTransactionOnAMissingTable_getsMotosError_notAConflict(launch):
    dynamo = launch(conflict_rate=1.0)

    with pytest.raises(DynamoError) as refused:
        dynamo.call("TransactWriteItems", TransactItems=two_puts("no-such-table"))

    assert refused.value.type == "ResourceNotFoundException"


def test_theRateOfTheTransactionsFirstTable_applies(launch, draws):
    dynamo = launch(conflict_rate=0.0)
    table = dynamo.table()
    dynamo.http("POST", f"/_strict/tables/{table}", {"conflict_rate": 1.0})
    draws.value = 0.99

    with pytest.raises(DynamoError) as cancelled:
        dynamo.call("TransactWriteItems", TransactItems=two_puts(table))

    assert cancelled.value.type == "TransactionCanceledException"
