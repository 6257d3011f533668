"""moto_server, one request at a time, and as strict as DynamoDB's documentation.

moto's server keeps its data in plain Python objects with no lock, so two
concurrent conditional writes can both pass their condition and one update is
lost (16 callers x 25 conditional decrements on a stock of 100 gave 103-108
successes). This launcher puts a lock around moto's WSGI app (serialized.py):
requests are still accepted concurrently (threaded server), but handled one
after another, as DynamoDB's item-level serialization would. Each request's
body is read in full before the lock is taken, so a client slow to send its
body stalls only itself.

It also removes two costs of moto that grow with the table and that DynamoDB
does not have (fast_paths.py); --plain keeps moto's own code paths.

In every mode, the ConsumedCapacity of an answer (when ReturnConsumedCapacity
asks for it) is the one DynamoDB documents, from the sizes of the items read
and written, not moto's flat 0.5 or 1 per request (capacity.py): the
benchmark measures capacity per call against the lenient mode, and a figure
is not a kindness to switch off.

moto is kinder than DynamoDB. Unless started with --lenient, the launcher
models what DynamoDB documents and moto leaves out:

- ClientRequestToken on TransactWriteItems (tokens.py). A token that committed
  is kept for a window (--token-window-seconds, 600 as in DynamoDB) after its
  request completed: the same token with the same parameters answers {}
  without writing again; with other parameters,
  IdempotentParameterMismatchException; while the first request is still
  running, TransactionInProgressException. A cancelled transaction records
  nothing. --transaction-latency-ms makes each transaction wait that long, its
  token already in flight, before it applies.
- Eventual consistency (consistency.py). A GetItem or Query without
  ConsistentRead, and every Query on a global secondary index, is served, with
  probability --stale-read-probability (1.0), from the table as it was
  --consistency-lag-ms (200) ago: an item written since shows its older
  version, or is absent if it was just created, or present if just deleted.
- Contention (conflicts.py). With probability --conflict-rate (0), a
  TransactWriteItems is cancelled with one TransactionConflict reason (the
  others None), as DynamoDB does when another transaction holds one of its
  items.

- Per-partition throughput (throughput.py). Each partition key is served at
  most --partition-write-units (1000) write units and --partition-read-units
  (3000) read units a second, with --burst-seconds (1) of them at once, billed
  as capacity.py bills (transactions double); past it, a single request fails
  with ThrottlingException (ProvisionedThroughputExceededException on a
  provisioned table) and its ThrottlingReasons, a transaction is cancelled
  with ThrottlingError on the hot items, and a batch hands the throttled keys
  back as unprocessed. 0 lifts a limit.

With --count-keys the launcher also counts, per table, the requests each
partition key received, as CloudWatch Contributor Insights shows DynamoDB's
most accessed keys (key_counts.py): reads (GetItem, each Query) and writes
(PutItem, UpdateItem, DeleteItem, each item of a BatchWriteItem or
TransactWriteItems but its ConditionChecks), attempts included whether their
condition held or not. GET /_keys/tables/NAME answers
{"reads": {PK: n}, "writes": {PK: n}}; DELETE resets them. Counts grow with
the keys seen: a benchmark's tool.

The same settings can be changed per table at run time, so that test classes
sharing one server keep apart (settings.py): POST /_strict/tables/NAME with a
JSON object of any of stale_read_probability, consistency_lag_ms,
conflict_rate, token_window_ms, transaction_latency_ms, partition_write_units,
partition_read_units, burst_seconds (numbers), throttled_key_prefix (text) overrides the defaults
for that table (it need not exist yet); DELETE /_strict/tables/NAME resets
it; GET shows what applies; GET /_strict tells whether the launcher is
strict. With --lenient these endpoints answer but change nothing.

Usage: python -m strict_moto (or tools/moto/serialized_moto_server.py)
    [--host 127.0.0.1] [--port 5000] [--plain] [--lenient]
    [--token-window-seconds 600] [--transaction-latency-ms 0]
    [--stale-read-probability 1.0] [--consistency-lag-ms 200] [--conflict-rate 0]
    [--partition-write-units 1000] [--partition-read-units 3000] [--burst-seconds 1]
    [--throttled-key-prefix PREFIX]
    [--count-keys]
With --port 0 a free port is chosen. Once listening, the launcher prints one
line to stdout, "moto listening on http://HOST:PORT", which callers wait for.

server.py puts the pieces together (build_app, which the tests call too); each
piece that changes moto's own methods does so through patches.py, so that a
test can put them back.
"""
