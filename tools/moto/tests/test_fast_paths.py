"""fast_paths.py: transactions save only what they name, queries read only their partition, a request does
not list what cannot change; same answers."""
import inspect
import os

import moto
import moto.backends as backends
import moto.core.responses as responses
import moto.core.utils
import pytest
from conftest import DynamoError, key
from moto.dynamodb.responses import DynamoHandler

from strict_moto.fast_paths import install_fast_paths
from strict_moto.patches import Patches


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


def test_requests_listNeitherMotosDirectoryNorTheHandlersFunctions_andSeeTheSameNames(launch, monkeypatch):
    modules = list(backends.list_of_moto_modules())  # moto's own, before the launcher replaces it
    dynamo = launch()
    table = dynamo.table()  # the handler's first request: its functions are listed here
    listed = []
    listdir, getmembers = os.listdir, inspect.getmembers
    monkeypatch.setattr(os, "listdir", lambda path=".": listed.append(path) or listdir(path))
    monkeypatch.setattr(inspect, "getmembers", lambda obj, *a, **kw: listed.append(obj) or getmembers(obj, *a, **kw))

    dynamo.put(table, "a", v="1")
    assert dynamo.get(table, "a", consistent=True)["v"] == "1"

    moto_dir = os.path.dirname(moto.__file__)
    assert [seen for seen in listed if seen == moto_dir or seen is DynamoHandler] == []
    assert list(backends.list_of_moto_modules()) == modules
    assert responses.method_names_from_class(DynamoHandler) == moto.core.utils.method_names_from_class(DynamoHandler)


def test_plainLeavesMotosFunctions_andUndoPutsThemBack(launch):
    originals = (backends.list_of_moto_modules, responses.method_names_from_class)
    launch(plain=True)
    assert (backends.list_of_moto_modules, responses.method_names_from_class) == originals

    patches = Patches()
    install_fast_paths(patches)
    assert backends.list_of_moto_modules is not originals[0]
    assert responses.method_names_from_class is not originals[1]
    patches.undo()

    assert backends.list_of_moto_modules is originals[0]
    assert responses.method_names_from_class is originals[1]
