"""throughput.py: a partition key served past its units a second is throttled, as DynamoDB throttles it."""
import pytest
from conftest import DynamoError, key


def limited(launch, write=4.0, read=8.0, burst=1.0):
    """A launcher whose partitions take `write` write units and `read` read units a second."""
    return launch(partition_write_units=write, partition_read_units=read, burst_seconds=burst)


def test_writesPastAPartitionsUnits_areThrottled_withTheKeyRangeReason_andWriteNothing(launch, clock):
    dynamo = limited(launch)
    table = dynamo.table()
    for i in range(4):  # 4 one-unit writes: the burst
        dynamo.put(table, "hot", sk=f"s{i}")

    with pytest.raises(DynamoError) as refused:
        dynamo.put(table, "hot", sk="s4")

    assert refused.value.type == "ThrottlingException"  # an on-demand table
    assert refused.value.body["ThrottlingReasons"] == [
        {"reason": "TableWriteKeyRangeThroughputExceeded", "resource": refused.value.body["ThrottlingReasons"][0]["resource"]}]
    assert refused.value.body["ThrottlingReasons"][0]["resource"].endswith(f":table/{table}")
    assert dynamo.get(table, "hot", sk="s4", consistent=True) is None
    dynamo.put(table, "cold", sk="s0")  # another partition has its own units
    clock.advance(0.25)  # a quarter of a second refills one unit
    dynamo.put(table, "hot", sk="s4")


def test_aProvisionedTable_answersProvisionedThroughputExceeded(launch):
    dynamo = limited(launch, write=1.0)
    table = "provisioned"
    dynamo.call("CreateTable", TableName=table, BillingMode="PROVISIONED",
                ProvisionedThroughput={"ReadCapacityUnits": 5, "WriteCapacityUnits": 5},
                AttributeDefinitions=[{"AttributeName": "PK", "AttributeType": "S"},
                                      {"AttributeName": "SK", "AttributeType": "S"}],
                KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"}, {"AttributeName": "SK", "KeyType": "RANGE"}])
    dynamo.put(table, "hot")
    with pytest.raises(DynamoError) as refused:
        dynamo.put(table, "hot", sk="B")
    assert refused.value.type == "ProvisionedThroughputExceededException"


def test_aTransactionCostsTwiceItsItems_andIsCancelledWithThrottlingErrorOnTheHotItemOnly(launch):
    dynamo = limited(launch, write=4.0)
    table = dynamo.table()
    puts = [{"Put": {"TableName": table, "Item": {"PK": {"S": pk}, "SK": {"S": "A"}}}} for pk in ("hot", "cold")]
    dynamo.call("TransactWriteItems", TransactItems=puts)  # 2 units from each: half the burst
    dynamo.call("TransactWriteItems", TransactItems=puts)

    with pytest.raises(DynamoError) as cancelled:
        dynamo.call("TransactWriteItems", TransactItems=[puts[0], {"Put": {
            "TableName": table, "Item": {"PK": {"S": "fresh"}, "SK": {"S": "A"}}}}])

    assert cancelled.value.type == "TransactionCanceledException"
    assert [r["Code"] for r in cancelled.value.body["CancellationReasons"]] == ["ThrottlingError", "None"]
    assert dynamo.get(table, "fresh", consistent=True) is None


def test_reads_areBilledInFourKilobyteUnits_eventualOnesHalf(launch, clock):
    dynamo = limited(launch, read=2.0)
    table = dynamo.table()
    dynamo.put(table, "hot", payload="x" * 5000)  # 2 read units strongly, 1 eventually
    dynamo.get(table, "hot", consistent=True)
    with pytest.raises(DynamoError) as refused:
        dynamo.get(table, "hot", consistent=True)
    assert refused.value.body["ThrottlingReasons"][0]["reason"] == "TableReadKeyRangeThroughputExceeded"
    clock.advance(1.0)
    dynamo.get(table, "hot")
    dynamo.get(table, "hot")


def test_aQueryIsAdmittedWhileItsPartitionHasUnits_thenBilledWhatItRead(launch, clock):
    dynamo = limited(launch, read=2.0, write=100.0)
    table = dynamo.table()
    for i in range(3):
        dynamo.put(table, "hot", sk=f"s{i}", payload="x" * 4000)  # 12 KB in the partition: 3 units read strongly
    query = dict(TableName=table, KeyConditionExpression="PK = :pk", ExpressionAttributeValues={":pk": {"S": "hot"}},
                 ConsistentRead=True)
    assert dynamo.call("Query", **query)["Count"] == 3  # admitted on 2 units, billed 3: in debt by 1
    with pytest.raises(DynamoError):
        dynamo.call("Query", **query)
    clock.advance(0.5)  # the debt paid, nothing left
    with pytest.raises(DynamoError):
        dynamo.call("Query", **query)
    clock.advance(0.25)
    assert dynamo.call("Query", **query)["Count"] == 3


def test_aBatchGetServesWhatItCan_andHandsBackTheThrottledKeys(launch):
    dynamo = limited(launch, read=1.0)
    table = dynamo.table()
    dynamo.put(table, "hot")
    dynamo.put(table, "cold")
    dynamo.get(table, "hot", consistent=True)  # the hot partition's one unit

    answer = dynamo.call("BatchGetItem", RequestItems={table: {"Keys": [key("hot"), key("cold")], "ConsistentRead": True}})

    assert [item["PK"]["S"] for item in answer["Responses"][table]] == ["cold"]
    assert answer["UnprocessedKeys"][table]["Keys"] == [key("hot")]
    assert answer["UnprocessedKeys"][table]["ConsistentRead"] is True
    with pytest.raises(DynamoError) as refused:  # nothing it can serve: throttled as a whole
        dynamo.call("BatchGetItem", RequestItems={table: {"Keys": [key("hot")], "ConsistentRead": True}})
    assert refused.value.type == "ThrottlingException"


def test_aBatchWriteWritesWhatItCan_andHandsBackTheThrottledItems(launch):
    dynamo = limited(launch, write=1.0)
    table = dynamo.table()
    dynamo.put(table, "hot")
    put = lambda pk: {"PutRequest": {"Item": {"PK": {"S": pk}, "SK": {"S": "B"}}}}

    answer = dynamo.call("BatchWriteItem", RequestItems={table: [put("hot"), put("cold")]})

    assert answer["UnprocessedItems"] == {table: [put("hot")]}
    assert dynamo.get(table, "cold", sk="B", consistent=True) is not None
    assert dynamo.get(table, "hot", sk="B", consistent=True) is None


def test_aLimitOfZero_limitsNothing_andTheLenientModeHasNoLimits(launch):
    dynamo = limited(launch, write=0.0)
    table = dynamo.table()
    for i in range(50):
        dynamo.put(table, "hot", sk=f"s{i}")
    lenient = launch(lenient=True, partition_write_units=1.0)
    other = lenient.table()
    for i in range(5):
        lenient.put(other, "hot", sk=f"s{i}")


def test_theLimitsAreSetPerTable_atRunTime(launch):
    dynamo = launch()
    table = dynamo.table()
    status, _ = dynamo.http("POST", f"/_strict/tables/{table}", {"partition_write_units": 1, "burst_seconds": 1})
    assert status == 200
    dynamo.put(table, "hot")
    with pytest.raises(DynamoError):
        dynamo.put(table, "hot", sk="B")
    other = dynamo.table()
    for i in range(20):  # another table keeps the defaults (DynamoDB's 1000 units)
        dynamo.put(other, "hot", sk=f"s{i}")


def test_aDeletedTablesPartitions_areForgotten_soATableOfTheSameNameStartsFull(launch):
    dynamo = limited(launch, write=1.0)
    table = dynamo.table()
    dynamo.put(table, "hot")
    with pytest.raises(DynamoError):
        dynamo.put(table, "hot", sk="B")
    description = dynamo.call("DescribeTable", TableName=table)["Table"]
    dynamo.call("DeleteTable", TableName=table)
    dynamo.call("CreateTable", TableName=table, BillingMode="PAY_PER_REQUEST",
                AttributeDefinitions=description["AttributeDefinitions"], KeySchema=description["KeySchema"])

    dynamo.put(table, "hot", sk="B")


def test_aKeyPrefix_confinesTheLimitsToTheKeysThatStartWithIt(launch):
    dynamo = launch(partition_write_units=1.0, partition_read_units=100.0, burst_seconds=1.0,
                    throttled_key_prefix="PRODUCT#")
    table = dynamo.table()
    for i in range(5):  # any other key keeps no limit
        dynamo.put(table, "CUSTOMER#c1", sk=f"s{i}")
    dynamo.put(table, "PRODUCT#p1", sk="s0")
    with pytest.raises(DynamoError) as refused:
        dynamo.put(table, "PRODUCT#p1", sk="s1")
    assert refused.value.type == "ThrottlingException"


def test_aKeyPrefixThatIsNotText_isRefused(launch):
    with pytest.raises(Exception):
        launch(throttled_key_prefix=3)
