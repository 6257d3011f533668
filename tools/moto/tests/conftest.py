"""The launcher's app in process: built as the server builds it, driven through werkzeug's test client,
with a clock, a sleep and a random source the test holds. Each test's patches to moto are undone after it."""
import json
import uuid

import pytest
from werkzeug.test import Client

from strict_moto.server import build_app

DEFAULTS = {
    "stale_read_probability": 1.0,
    "consistency_lag_ms": 200.0,
    "conflict_rate": 0.0,
    "token_window_ms": 600_000.0,
    "transaction_latency_ms": 0.0,
    # DynamoDB's limits: far above what a test here sends to one key, unless it lowers them.
    "partition_write_units": 1000.0,
    "partition_read_units": 3000.0,
    "burst_seconds": 1.0,
}
# moto picks its backend from the credential scope; it does not check the signature.
AUTHORIZATION = ("AWS4-HMAC-SHA256 Credential=test/20261204/us-east-1/dynamodb/aws4_request, "
                 "SignedHeaders=host, Signature=0")


class Clock:
    """Monotonic seconds that move only when the test says so."""

    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now

    def advance(self, seconds):
        self.now += seconds


class Draws:
    """A random source that draws what the test set: `value` from random(), `index` from randrange."""

    def __init__(self, value=0.0, index=0):
        self.value = value
        self.index = index

    def random(self):
        return self.value

    def randrange(self, stop):
        assert 0 <= self.index < stop
        return self.index


class DynamoError(Exception):
    def __init__(self, status, body):
        super().__init__(f"{status} {body}")
        self.status = status
        self.body = body
        self.type = body.get("__type", "").rpartition("#")[2]


class Launcher:
    """One built app and a client of it, speaking DynamoDB's JSON protocol and the launcher's endpoints."""

    def __init__(self, app):
        self.client = Client(app)

    def call(self, action, **body):
        """The answer to one DynamoDB action, or DynamoError when it fails."""
        response = self.client.post("/", data=json.dumps(body), headers={
            "X-Amz-Target": f"DynamoDB_20120810.{action}",
            "Content-Type": "application/x-amz-json-1.0",
            "Authorization": AUTHORIZATION,
        })
        answer = json.loads(response.get_data() or b"{}")
        if response.status_code != 200:
            raise DynamoError(response.status_code, answer)
        return answer

    def http(self, method, path, body=None):
        """(status, JSON answer) of one of the launcher's own endpoints."""
        response = self.client.open(path, method=method, data=None if body is None else json.dumps(body))
        return response.status_code, json.loads(response.get_data())

    def table(self, gsi=False):
        """A new table with the project's key schema (PK, SK; GSI1 on GSI1PK, GSI1SK if asked); its name."""
        name = f"t-{uuid.uuid4().hex[:12]}"
        attributes = [{"AttributeName": "PK", "AttributeType": "S"}, {"AttributeName": "SK", "AttributeType": "S"}]
        extra = {}
        if gsi:
            attributes += [{"AttributeName": "GSI1PK", "AttributeType": "S"},
                           {"AttributeName": "GSI1SK", "AttributeType": "S"}]
            extra["GlobalSecondaryIndexes"] = [{
                "IndexName": "GSI1",
                "KeySchema": [{"AttributeName": "GSI1PK", "KeyType": "HASH"},
                              {"AttributeName": "GSI1SK", "KeyType": "RANGE"}],
                "Projection": {"ProjectionType": "ALL"}}]
        self.call("CreateTable", TableName=name, BillingMode="PAY_PER_REQUEST", AttributeDefinitions=attributes,
                  KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"}, {"AttributeName": "SK", "KeyType": "RANGE"}],
                  **extra)
        return name

    def put(self, table, pk, sk="A", **attributes):
        item = {"PK": {"S": pk}, "SK": {"S": sk}, **{k: {"S": v} for k, v in attributes.items()}}
        return self.call("PutItem", TableName=table, Item=item)

    def get(self, table, pk, sk="A", consistent=False):
        """The item's attributes as plain strings, or None."""
        item = self.call("GetItem", TableName=table, Key=key(pk, sk), ConsistentRead=consistent).get("Item")
        return None if item is None else {name: next(iter(value.values())) for name, value in item.items()}


def key(pk, sk="A"):
    return {"PK": {"S": pk}, "SK": {"S": sk}}


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def draws():
    return Draws()


@pytest.fixture
def launch(clock, draws):
    """launch(plain=..., lenient=..., count_keys=..., sleep=..., **settings) builds an app; moto is reset after."""
    built = []

    def build(plain=False, lenient=False, count_keys=False, sleep=lambda seconds: None, **settings):
        app, patches = build_app({**DEFAULTS, **settings}, plain=plain, lenient=lenient, count_keys=count_keys,
                                 clock=clock, sleep=sleep, rng=draws)
        built.append(patches)
        return Launcher(app)

    yield build
    for patches in built:
        patches.undo()
    from moto.backends import get_backend
    get_backend("dynamodb").reset()
