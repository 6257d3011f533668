"""The command line: its flags, read once into the launcher's options, then the server started with them."""
import argparse
import math
import sys

import strict_moto


def non_negative(kind):
    def parse(text):
        value = kind(text)
        if not math.isfinite(value) or value < 0:
            raise argparse.ArgumentTypeError(f"{text} is not a non-negative number")
        return value
    return parse


def probability(text):
    value = float(text)
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text} is not between 0 and 1")
    return value


def parse_args(argv=None):
    parser = argparse.ArgumentParser(prog="strict_moto", description=strict_moto.__doc__.splitlines()[0])
    parser.add_argument("-H", "--host", default="127.0.0.1")
    parser.add_argument("-p", "--port", type=int, default=5000)
    parser.add_argument("--plain", action="store_true", help="keep moto's own transaction and query paths")
    parser.add_argument("--lenient", action="store_true",
                        help="moto's own kindness: no tokens, stale reads or conflicts (the settings below are ignored)")
    parser.add_argument("--token-window-seconds", type=non_negative(float), default=600.0,
                        help="how long a committed ClientRequestToken is remembered (DynamoDB: 10 minutes)")
    parser.add_argument("--transaction-latency-ms", type=non_negative(float), default=0.0,
                        help="how long each TransactWriteItems waits, its token in flight, before it applies")
    parser.add_argument("--stale-read-probability", type=probability, default=1.0,
                        help="chance that an eventually consistent read sees the table as it was --consistency-lag-ms ago")
    parser.add_argument("--consistency-lag-ms", type=non_negative(float), default=200.0,
                        help="how far behind an eventually consistent read may be")
    parser.add_argument("--conflict-rate", type=probability, default=0.0,
                        help="chance that a TransactWriteItems is cancelled with TransactionConflict")
    parser.add_argument("--partition-write-units", type=non_negative(float), default=1000.0,
                        help="write units a second one partition key is served before it is throttled (DynamoDB: 1000; 0: no limit)")
    parser.add_argument("--partition-read-units", type=non_negative(float), default=3000.0,
                        help="read units a second one partition key is served before it is throttled (DynamoDB: 3000; 0: no limit)")
    parser.add_argument("--burst-seconds", type=non_negative(float), default=1.0,
                        help="how many seconds of a partition's units it may use at once after an idle spell")
    parser.add_argument("--throttled-key-prefix", default="",
                        help="apply the per-key limits only to partition keys with this prefix (a benchmark scales "
                             "them down for one product's keys alone; default: every key)")
    parser.add_argument("--count-keys", action="store_true",
                        help="count each table's requests per partition key (GET /_keys/tables/NAME)")
    return parser.parse_args(argv)


def strict_defaults(args):
    """The strict mode's settings for every table that has none of its own."""
    return {
        "stale_read_probability": args.stale_read_probability,
        "consistency_lag_ms": args.consistency_lag_ms,
        "conflict_rate": args.conflict_rate,
        "token_window_ms": args.token_window_seconds * 1000.0,
        "transaction_latency_ms": args.transaction_latency_ms,
        "partition_write_units": args.partition_write_units,
        "partition_read_units": args.partition_read_units,
        "burst_seconds": args.burst_seconds,
        "throttled_key_prefix": args.throttled_key_prefix,
    }


def main(argv=None):
    args = parse_args(argv)
    try:
        from strict_moto.server import build_app, serve
    except ImportError as missing:
        if (missing.name or "").partition(".")[0] not in ("moto", "werkzeug", "flask"):
            raise
        sys.stderr.write(
            f"moto is not installed for {sys.executable} ({missing}).\n"
            "./test.sh and ./run.sh install the pinned version (tools/python-requirements.txt).\n")
        sys.exit(3)
    app, _ = build_app(strict_defaults(args), plain=args.plain, lenient=args.lenient, count_keys=args.count_keys)
    serve(app, args.host, args.port)
