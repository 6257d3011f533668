"""consistency.py: eventually consistent reads see the table as it was a lag ago, at the stale-read probability."""
from conftest import key

from strict_moto.consistency import History


def test_history_servesTheVersionBeforeTheFirstWriteSinceTheCutoff_andForgetsOlderOnes():
    history = History()
    history.record("t", "k", "v0", now=10.0, lag_seconds=1.0)
    history.record("t", "k", "v1", now=10.5, lag_seconds=1.0)

    assert history.as_of("t", cutoff=9.9) == {"k": "v0"}
    assert history.as_of("t", cutoff=10.0) == {"k": "v1"}  # the first write is older than the cutoff
    assert history.as_of("t", cutoff=10.5) == {}
    assert history.as_of("t", cutoff=9.0) == {}  # pruned: nothing older than the last cutoff is kept


def test_history_answersOnlyTheKeysAsked():
    history = History()
    history.record("t", "a", "a0", now=10.0, lag_seconds=1.0)
    history.record("t", "b", "b0", now=10.0, lag_seconds=1.0)

    assert history.as_of("t", cutoff=9.0, keys=["b", "c"]) == {"b": "b0"}


def rewrite(dynamo, clock, table):
    """Writes item p as "old", then a second later (past the lag of an older write) as "new"."""
    dynamo.put(table, "p", v="old")
    clock.advance(1.0)
    dynamo.put(table, "p", v="new")


def test_eventualGetItem_seesTheOlderVersion_untilTheLagHasPassed(launch, clock):
    dynamo = launch(consistency_lag_ms=200)
    table = dynamo.table()
    rewrite(dynamo, clock, table)

    assert dynamo.get(table, "p")["v"] == "old"
    assert dynamo.get(table, "p", consistent=True)["v"] == "new"
    clock.advance(0.2)
    assert dynamo.get(table, "p")["v"] == "new"


def test_eventualGetItem_missesAJustCreatedItem_andStillSeesAJustDeletedOne(launch, clock):
    dynamo = launch()
    table = dynamo.table()
    dynamo.put(table, "gone", v="there")
    clock.advance(1.0)
    dynamo.put(table, "new", v="here")
    dynamo.call("DeleteItem", TableName=table, Key=key("gone"))

    assert dynamo.get(table, "new") is None
    assert dynamo.get(table, "gone")["v"] == "there"
    assert dynamo.get(table, "gone", consistent=True) is None


def test_eventualRead_isFresh_whenTheDrawIsAtOrAboveTheStaleReadProbability(launch, clock, draws):
    dynamo = launch(stale_read_probability=0.5)
    table = dynamo.table()
    rewrite(dynamo, clock, table)

    draws.value = 0.5
    assert dynamo.get(table, "p")["v"] == "new"
    draws.value = 0.49
    assert dynamo.get(table, "p")["v"] == "old"


def test_queryOnTheGlobalIndex_isStale_evenAfterTheTableQueryAskedForConsistency(launch, clock):
    dynamo = launch()
    table = dynamo.table(gsi=True)
    dynamo.put(table, "p", GSI1PK="status", GSI1SK="p", v="old")
    clock.advance(1.0)
    dynamo.put(table, "p", GSI1PK="status", GSI1SK="p", v="new")
    dynamo.put(table, "q", GSI1PK="status", GSI1SK="q", v="created")

    def values(**query):
        answer = dynamo.call("Query", TableName=table, **query)
        return [item["v"]["S"] for item in answer["Items"]]

    assert values(KeyConditionExpression="PK = :p", ExpressionAttributeValues={":p": {"S": "p"}},
                  ConsistentRead=True) == ["new"]
    assert values(KeyConditionExpression="PK = :p", ExpressionAttributeValues={":p": {"S": "p"}}) == ["old"]
    assert values(IndexName="GSI1", KeyConditionExpression="GSI1PK = :s",
                  ExpressionAttributeValues={":s": {"S": "status"}}) == ["old"]
    clock.advance(0.2)
    assert values(IndexName="GSI1", KeyConditionExpression="GSI1PK = :s",
                  ExpressionAttributeValues={":s": {"S": "status"}}) == ["new", "created"]


def test_aTableWithoutLag_isReadFresh(launch, clock):
    dynamo = launch()
    table = dynamo.table()
    dynamo.http("POST", f"/_strict/tables/{table}", {"consistency_lag_ms": 0})
    dynamo.put(table, "p", v="old")
    dynamo.put(table, "p", v="new")

    assert dynamo.get(table, "p")["v"] == "new"


def test_aStaleReadLeavesTheTableAsItWas(launch, clock):
    dynamo = launch()
    table = dynamo.table()
    rewrite(dynamo, clock, table)
    dynamo.put(table, "created", v="here")

    assert dynamo.get(table, "p")["v"] == "old"
    assert dynamo.get(table, "created") is None

    assert dynamo.get(table, "p", consistent=True)["v"] == "new"
    assert dynamo.get(table, "created", consistent=True)["v"] == "here"
