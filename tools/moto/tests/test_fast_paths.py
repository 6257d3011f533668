"""fast_paths.py: transactions save only what they name, queries read only their partition, a request does
not list what cannot change, an answer's plain attribute values are not walked; same answers."""
import inspect
import os

import moto
import moto.backends as backends
import moto.core.responses as responses
import moto.core.utils
import pytest
from conftest import DynamoError, key
from moto.core.serialize import BaseJSONSerializer
from moto.dynamodb.parsing.expressions import UpdateExpressionParser
from moto.dynamodb.responses import DynamoHandler

from strict_moto import fast_paths
from strict_moto.fast_paths import install_fast_paths, is_plain_attribute_value
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


EVERY_KIND = {
    "s": {"S": "text \"quoted\" é"}, "n": {"N": "-12.5"}, "b": {"B": "AAEC/w=="}, "yes": {"BOOL": True},
    "none": {"NULL": True}, "ss": {"SS": ["a", "b"]}, "ns": {"NS": ["1", "2"]}, "bs": {"BS": ["AQ==", "Ag=="]},
    "m": {"M": {"inner": {"S": "x"}, "deep": {"L": [{"N": "1"}, {"M": {"b": {"B": "AQ=="}}}]}}},
    "l": {"L": [{"S": "y"}, {"BOOL": False}, {"L": []}, {"M": {}}]},
}


@pytest.mark.parametrize("plain", [False, True])
def test_everyKindOfAttribute_readsBackAsWritten_throughEveryReadingAction(launch, plain, monkeypatch):
    written_as_they_are = []
    monkeypatch.setattr(fast_paths, "is_plain_attribute_value",
                        lambda value: is_plain_attribute_value(value) and not written_as_they_are.append(value))
    dynamo = launch(plain=plain)
    table = dynamo.table()
    item = {**key("a"), **EVERY_KIND}
    dynamo.call("PutItem", TableName=table, Item=item)

    assert dynamo.call("GetItem", TableName=table, Key=key("a"), ConsistentRead=True)["Item"] == item
    assert dynamo.call("Query", TableName=table, ConsistentRead=True, KeyConditionExpression="PK = :p",
                       ExpressionAttributeValues={":p": {"S": "a"}})["Items"] == [item]
    assert dynamo.call("BatchGetItem", RequestItems={table: {"Keys": [key("a")], "ConsistentRead": True}}
                       )["Responses"][table] == [item]
    assert dynamo.call("TransactGetItems", TransactItems=[{"Get": {"TableName": table, "Key": key("a")}}]
                       )["Responses"] == [{"Item": item}]
    updated = dynamo.call("UpdateItem", TableName=table, Key=key("a"), UpdateExpression="SET s = :s",
                          ExpressionAttributeValues={":s": {"S": "new"}}, ReturnValues="ALL_OLD")
    assert updated["Attributes"] == item
    assert bool(written_as_they_are) is not plain  # the shortcut was taken, and only off --plain


@pytest.mark.parametrize("plain", [False, True])
def test_oneUpdateExpression_appliesEachRequestsOwnValues_andABadOneFailsEveryTime(launch, plain):
    dynamo = launch(plain=plain)
    table = dynamo.table()
    for pk, value, count in (("a", "1", "2"), ("b", "x", "5"), ("a", "3", "4")):
        dynamo.call("UpdateItem", TableName=table, Key=key(pk), UpdateExpression="SET v = :v ADD n :n",
                    ExpressionAttributeValues={":v": {"S": value}, ":n": {"N": count}})
    assert dynamo.call("GetItem", TableName=table, Key=key("a"), ConsistentRead=True)["Item"] == {
        **key("a"), "v": {"S": "3"}, "n": {"N": "6"}}
    assert dynamo.call("GetItem", TableName=table, Key=key("b"), ConsistentRead=True)["Item"] == {
        **key("b"), "v": {"S": "x"}, "n": {"N": "5"}}
    for _ in range(2):
        with pytest.raises(DynamoError) as bad:
            dynamo.call("UpdateItem", TableName=table, Key=key("a"), UpdateExpression="SET v = = :v",
                        ExpressionAttributeValues={":v": {"S": "y"}})
        assert bad.value.type == "ValidationException"


def test_plainAttributeValues_areTheOnesTheSerializerWouldCopy():
    assert all(is_plain_attribute_value(value) for name, value in EVERY_KIND.items() if name not in ("b", "bs", "m"))
    # binary anywhere inside goes through moto's serializer, which encodes the bytes moto holds
    assert not is_plain_attribute_value(EVERY_KIND["b"])
    assert not is_plain_attribute_value(EVERY_KIND["bs"])
    assert not is_plain_attribute_value(EVERY_KIND["m"])
    assert not is_plain_attribute_value({"N": 5})  # not DynamoDB's JSON
    assert not is_plain_attribute_value({"S": "a", "N": "1"})
    assert not is_plain_attribute_value({"M": {"k": {"BOOL": "true"}}})
    assert not is_plain_attribute_value({"M": {"": {"S": "x"}}})  # moto writes an empty name its own way


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
    def current():
        return (backends.list_of_moto_modules, responses.method_names_from_class,
                BaseJSONSerializer._serialize_type_structure, UpdateExpressionParser.__dict__["make"])

    originals = current()
    launch(plain=True)
    assert current() == originals

    patches = Patches()
    install_fast_paths(patches)
    assert backends.list_of_moto_modules is not originals[0]
    assert responses.method_names_from_class is not originals[1]
    assert BaseJSONSerializer._serialize_type_structure is not originals[2]
    assert UpdateExpressionParser.__dict__["make"] is not originals[3]
    patches.undo()

    assert all(now is then for now, then in zip(current(), originals))
