"""ClientRequestTokens of TransactWriteItems, as DynamoDB documents them, and each transaction's latency."""
import hashlib
import heapq
import json
import threading

from strict_moto.wsgi import dynamodb_error, respond


class Tokens:
    """Tokens in flight, and those that committed, until their window ends.

    A token is registered when its request arrives, before the request waits for anything, so a
    duplicate sent meanwhile finds it. It is kept only if its transaction committed.
    """

    REGISTERED, REPLAY, MISMATCH, IN_PROGRESS = "registered", "replay", "mismatch", "in progress"

    def __init__(self):
        self._lock = threading.Lock()
        self._tokens = {}  # token -> [digest of the parameters, expiry (monotonic seconds) or None while in flight]
        self._expiries = []  # heap of (expiry, token)

    def begin(self, token, digest, now):
        with self._lock:
            while self._expiries and self._expiries[0][0] <= now:
                expiry, expired = heapq.heappop(self._expiries)
                if self._tokens.get(expired, (None, None))[1] == expiry:
                    del self._tokens[expired]
            known = self._tokens.get(token)
            if known is None:
                self._tokens[token] = [digest, None]
                return self.REGISTERED
            if known[1] is None:
                return self.IN_PROGRESS
            return self.REPLAY if known[0] == digest else self.MISMATCH

    def finish(self, token, committed, window_seconds, now):
        with self._lock:
            if not committed:
                del self._tokens[token]
                return
            expiry = now + window_seconds
            self._tokens[token][1] = expiry
            heapq.heappush(self._expiries, (expiry, token))


class StrictTransactions:
    """WSGI middleware, outside the data lock: ClientRequestTokens and the latency of TransactWriteItems.

    `clock` (monotonic seconds) stamps the tokens' windows; `sleep` waits out the latency.
    """

    def __init__(self, app, settings, tokens, clock, sleep):
        self._app = app
        self._settings = settings
        self._tokens = tokens
        self._clock = clock
        self._sleep = sleep

    def __call__(self, environ, start_response):
        target = environ.get("HTTP_X_AMZ_TARGET", "")
        if not target.endswith(".TransactWriteItems"):
            return self._app(environ, start_response)
        try:
            request = json.loads(environ["launcher.body"] or b"{}")
        except ValueError:
            return self._app(environ, start_response)  # moto says what is wrong with it
        if not isinstance(request, dict):
            return self._app(environ, start_response)
        settings = self._settings.of(first_table(request))
        token = request.get("ClientRequestToken")
        if isinstance(token, str):
            parameters = {name: value for name, value in request.items() if name != "ClientRequestToken"}
            digest = hashlib.sha256(json.dumps(parameters, sort_keys=True, separators=(",", ":")).encode()).digest()
            verdict = self._tokens.begin(token, digest, self._clock())
            if verdict == Tokens.REPLAY:
                return respond(start_response, 200, replay_response(request))
            if verdict == Tokens.MISMATCH:
                return dynamodb_error(start_response, "IdempotentParameterMismatchException",
                                      "DynamoDB rejected the request because you retried a request with a "
                                      "different payload but with an idempotent token that was already used.")
            if verdict == Tokens.IN_PROGRESS:
                return dynamodb_error(start_response, "TransactionInProgressException",
                                      "The transaction with the given request token is already in progress.")
        status = []

        def capture(line, headers, exc_info=None):
            status.append(line)
            return start_response(line, headers, exc_info)

        committed = False
        try:
            self._sleep(settings["transaction_latency_ms"] / 1000.0)
            result = self._app(environ, capture)  # drained under the lock: the transaction is over
            committed = bool(status) and status[-1].startswith("200")
            return result
        finally:
            if isinstance(token, str):
                self._tokens.finish(token, committed, settings["token_window_ms"] / 1000.0, self._clock())


def first_table(request):
    items = request.get("TransactItems")
    if isinstance(items, list) and items and isinstance(items[0], dict) and items[0]:
        op = next(iter(items[0].values()))
        if isinstance(op, dict) and isinstance(op.get("TableName"), str):
            return op["TableName"]
    return None


def replay_response(request):
    """What DynamoDB answers to a replayed token: nothing, and the read capacity used if that was asked."""
    if request.get("ReturnConsumedCapacity") not in ("TOTAL", "INDEXES"):
        return {}
    per_table = {}
    for entry in request.get("TransactItems") or ():
        op = next(iter(entry.values())) if isinstance(entry, dict) and entry else None
        if isinstance(op, dict) and isinstance(op.get("TableName"), str):
            per_table[op["TableName"]] = per_table.get(op["TableName"], 0.0) + 2.0  # a transactional read
    return {"ConsumedCapacity": [{"TableName": name, "CapacityUnits": units, "ReadCapacityUnits": units}
                                 for name, units in per_table.items()]}
