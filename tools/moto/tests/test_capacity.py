"""capacity.py: ConsumedCapacity from the items' sizes, as DynamoDB documents it."""
import pytest

from strict_moto.capacity import number_size, read_units, value_size, write_units


@pytest.mark.parametrize("number, size", [("0", 2), ("7", 2), ("12", 2), ("123", 3), ("-1200", 2), ("0.0012", 2),
                                          ("1.5e10", 2)])
def test_numberSize_isOneBytePerTwoSignificantDigits_plusOne(number, size):
    assert number_size(number) == size


def test_valueSize_ofNestedValues():
    assert value_size({"S": "héllo"}) == 6
    assert value_size({"BOOL": True}) == 1
    assert value_size({"L": [{"S": "ab"}, {"N": "1"}]}) == 3 + (1 + 2) + (1 + 2)
    assert value_size({"M": {"k": {"S": "v"}}}) == 3 + 1 + 1 + 1


def test_units_roundUp_andEventualReadsCostHalf():
    assert read_units(0, consistent=True) == 1.0
    assert read_units(4097, consistent=True) == 2.0
    assert read_units(4097, consistent=False) == 1.0
    assert write_units(1025) == 2.0


def test_putItem_isBilledOnTheLargerOfTheItemBeforeAndAfter(launch):
    dynamo = launch()
    table = dynamo.table()
    dynamo.put(table, "p", v="x" * 3000)

    answer = dynamo.call("PutItem", TableName=table, Item={"PK": {"S": "p"}, "SK": {"S": "A"}},
                         ReturnConsumedCapacity="TOTAL")

    assert answer["ConsumedCapacity"] == {"TableName": table, "CapacityUnits": 3.0}


def test_eventualGetItem_costsHalfAUnit_andNothingIsAnsweredUnasked(launch):
    dynamo = launch()
    table = dynamo.table()
    dynamo.put(table, "p", v="x")

    answer = dynamo.call("GetItem", TableName=table, Key={"PK": {"S": "p"}, "SK": {"S": "A"}},
                         ReturnConsumedCapacity="TOTAL")
    assert answer["ConsumedCapacity"] == {"TableName": table, "CapacityUnits": 0.5}
    assert "ConsumedCapacity" not in dynamo.call("GetItem", TableName=table, Key={"PK": {"S": "p"}, "SK": {"S": "A"}})


def test_transaction_doublesEachItemsUnits_andSplitsReadsFromWrites(launch):
    dynamo = launch()
    table = dynamo.table()
    dynamo.put(table, "checked")

    answer = dynamo.call("TransactWriteItems", ReturnConsumedCapacity="TOTAL", TransactItems=[
        {"Put": {"TableName": table, "Item": {"PK": {"S": "p"}, "SK": {"S": "A"}}}},
        {"ConditionCheck": {"TableName": table, "Key": {"PK": {"S": "checked"}, "SK": {"S": "A"}},
                            "ConditionExpression": "attribute_exists(PK)"}}])

    assert answer["ConsumedCapacity"] == [{"TableName": table, "CapacityUnits": 4.0,
                                           "ReadCapacityUnits": 2.0, "WriteCapacityUnits": 2.0}]


def test_writeToAnIndexedItem_addsTheIndexsWrite(launch):
    dynamo = launch()
    table = dynamo.table(gsi=True)

    answer = dynamo.call("PutItem", TableName=table, ReturnConsumedCapacity="INDEXES", Item={
        "PK": {"S": "p"}, "SK": {"S": "A"}, "GSI1PK": {"S": "s"}, "GSI1SK": {"S": "p"}})

    assert answer["ConsumedCapacity"] == {"TableName": table, "CapacityUnits": 2.0, "Table": {"CapacityUnits": 1.0},
                                          "GlobalSecondaryIndexes": {"GSI1": {"CapacityUnits": 1.0}}}


def test_batchWrite_billsEachItemOnce_onItsOwnSize(launch):
    dynamo = launch()
    table = dynamo.table()
    dynamo.put(table, "deleted", v="x" * 1500)

    answer = dynamo.call("BatchWriteItem", ReturnConsumedCapacity="TOTAL", RequestItems={table: [
        {"PutRequest": {"Item": {"PK": {"S": "p"}, "SK": {"S": "A"}, "v": {"S": "x" * 1500}}}},
        {"DeleteRequest": {"Key": {"PK": {"S": "deleted"}, "SK": {"S": "A"}}}}]})

    assert answer["ConsumedCapacity"] == [{"TableName": table, "CapacityUnits": 4.0}]
