"""key_counts.py: requests per partition key, per table, with --count-keys."""


def test_countsReadsAndWrites_perPartitionKey_butNotConditionChecks(launch):
    dynamo = launch(count_keys=True)
    table = dynamo.table()
    dynamo.put(table, "a")
    dynamo.put(table, "a", "B")
    dynamo.get(table, "b", consistent=True)
    dynamo.call("TransactWriteItems", TransactItems=[
        {"Put": {"TableName": table, "Item": {"PK": {"S": "c"}, "SK": {"S": "A"}}}},
        {"ConditionCheck": {"TableName": table, "Key": {"PK": {"S": "a"}, "SK": {"S": "A"}},
                            "ConditionExpression": "attribute_exists(PK)"}}])
    dynamo.call("Query", TableName=table, KeyConditionExpression="PK = :p",
                ExpressionAttributeValues={":p": {"S": "a"}}, ConsistentRead=True)

    assert dynamo.http("GET", f"/_keys/tables/{table}") == (200, {"reads": {"b": 1, "a": 1},
                                                                  "writes": {"a": 2, "c": 1}})
    assert dynamo.http("DELETE", f"/_keys/tables/{table}") == (200, {"reads": {}, "writes": {}})


def test_withoutCountKeys_theEndpointSaysHowToTurnItOn(launch):
    status, answer = launch().http("GET", "/_keys/tables/t")

    assert status == 404 and "--count-keys" in answer["message"]
