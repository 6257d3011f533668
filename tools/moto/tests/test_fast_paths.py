"""fast_paths.py: transactions save only what they name, queries read only their partition; same answers."""
import pytest
from conftest import DynamoError, key


@pytest.mark.parametrize("plain", [False, True])
def test_cancelledTransaction_leavesEveryItemAsItWas(launch, plain):
    dynamo = launch(plain=plain)
    table = dynamo.table()
    dynamo.put(table, "a", v="before")

    with pytest.raises(DynamoError) as cancelled:
        dynamo.call("TransactWriteItems", TransactItems=[
            {"Update": {"TableName": table, "Key": key("a"), "UpdateExpression": "SET v = :v",
                        "ExpressionAttributeValues": {":v": {"S": "after"}}}},
            {"Put": {"TableName": table, "Item": {**key("new"), "v": {"S": "new"}}}},
            {"ConditionCheck": {"TableName": table, "Key": key("missing"),
                                "ConditionExpression": "attribute_exists(PK)"}}])

    assert cancelled.value.type == "TransactionCanceledException"
    assert dynamo.get(table, "a", consistent=True)["v"] == "before"
    assert dynamo.get(table, "new", consistent=True) is None


@pytest.mark.parametrize("plain", [False, True])
def test_query_answersItsPartitionInKeyOrder_pageByPage(launch, clock, plain):
    dynamo = launch(plain=plain)
    table = dynamo.table(gsi=True)
    for sk in ("C", "A", "B"):
        dynamo.put(table, "p", sk, GSI1PK="s", GSI1SK=sk)
    dynamo.put(table, "other", "A", GSI1PK="s", GSI1SK="0")
    clock.advance(1.0)  # the index is read eventually: past the lag, it has every write

    def page(start=None):
        extra = {"ExclusiveStartKey": start} if start else {}
        return dynamo.call("Query", TableName=table, Limit=2, ConsistentRead=True, KeyConditionExpression="PK = :p",
                           ExpressionAttributeValues={":p": {"S": "p"}}, **extra)

    first = page()
    second = page(first["LastEvaluatedKey"])
    assert [i["SK"]["S"] for i in first["Items"] + second["Items"]] == ["A", "B", "C"]
    assert "LastEvaluatedKey" not in second
    on_index = dynamo.call("Query", TableName=table, IndexName="GSI1", KeyConditionExpression="GSI1PK = :s",
                           ExpressionAttributeValues={":s": {"S": "s"}})
    assert [i["GSI1SK"]["S"] for i in on_index["Items"]] == ["0", "A", "B", "C"]
